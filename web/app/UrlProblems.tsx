/** Says which URL parameters were bad or unknown, and what was used instead. */
export function UrlProblems({ problems }: { problems: readonly string[] }) {
  if (problems.length === 0) return null;
  return (
    <div className="alert alert-warn" role="alert" data-testid="url-problems">
      {problems.map((p) => (
        <p key={p}>{p}</p>
      ))}
    </div>
  );
}
