/**
 * The server's SVG picture, shown as an image. An SVG inside an <img> runs no script, loads
 * nothing and cannot touch the page, so the text is never parsed into this document: it is
 * our own server's picture, but it is treated as any text from the network is.
 */

/** Larger than any picture a game draws; a bigger answer is not shown. */
export const MAX_PICTURE_CHARS = 4 * 1024 * 1024;

export function pictureSource(svg: string): string {
  if (svg.length > MAX_PICTURE_CHARS) {
    throw new Error(`the picture is over ${MAX_PICTURE_CHARS} characters`);
  }
  const bytes = new TextEncoder().encode(svg);
  let binary = "";
  const chunk = 0x8000;
  for (let at = 0; at < bytes.length; at += chunk) {
    binary += String.fromCharCode(...bytes.subarray(at, at + chunk));
  }
  return `data:image/svg+xml;base64,${btoa(binary)}`;
}
