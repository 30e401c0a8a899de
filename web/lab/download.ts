// download.ts - hands the reader a file made on the page (an export) through a
// temporary object URL and a download link.
export function downloadText(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  // The download has started once the click returns; the URL is freed a little later.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
