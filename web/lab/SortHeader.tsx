// SortHeader.tsx - a sortable table's column header: a button that sorts by the
// column (again: the other way), `aria-sort` saying how the table is sorted, and
// an arrow for the eye only (the name stays the column's title).

export type SortDirection = 'ascending' | 'descending' | 'none';

export function SortHeader({ title, dir, onSort }: { title: string; dir: SortDirection; onSort: () => void }) {
  return (
    <th scope="col" aria-sort={dir}>
      <button type="button" onClick={onSort}>
        {title}
        <span aria-hidden="true">{dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ''}</span>
      </button>
    </th>
  );
}
