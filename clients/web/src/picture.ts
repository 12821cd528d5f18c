/**
 * The server's SVG pictures: shown as images, and kept for stepping.
 *
 * An SVG inside an <img> runs no script, loads nothing and cannot touch the page, so the
 * text is never parsed into this document: it is our own server's picture, but it is
 * treated as any text from the network is.
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

/** Revisions fetched together, in one replay (the server folds the game once for them). */
export const BLOCK = 32;
/** Pictures kept (each a few tens of kilobytes): six blocks. */
export const PICTURES_KEPT = 6 * BLOCK;
/** How close to the edge of a block stepping gets before the next block is fetched. */
const AHEAD = 8;

/** Where the pictures of one game, for one viewer, come from. */
export interface PictureSource {
  /** The SVG of one revision. */
  one(revision: number): Promise<string>;
  /** The SVGs of the revisions `first` to `last`, in order, as (revision, SVG). */
  range(first: number, last: number): AsyncIterable<readonly [number, string]>;
}

/**
 * The pictures of one game for one viewer, as image sources, kept for stepping. A picture
 * not here is fetched alone (GetState), and the block of revisions around it is fetched
 * in the background in one replay, so that stepping on finds its pictures here: the server
 * folds the game once per block instead of once per revision.
 */
export class Pictures {
  private readonly kept = new Map<number, Promise<string>>();
  private readonly fetching = new Set<number>();

  constructor(private readonly source: PictureSource) {}

  get(revision: number): Promise<string> {
    const kept = this.kept.get(revision);
    if (kept !== undefined) {
      this.kept.delete(revision);
      this.kept.set(revision, kept);
      return kept;
    }
    const made = this.source.one(revision).then(pictureSource);
    this.keep(revision, made);
    return made;
  }

  /** Fetches in the background the blocks a reader at `revision` is about to step into. */
  around(revision: number, head: number): void {
    const block = Math.floor((revision - 1) / BLOCK);
    const offset = (revision - 1) % BLOCK;
    void this.fetchBlock(block, head);
    if (offset >= BLOCK - AHEAD) {
      void this.fetchBlock(block + 1, head);
    }
    if (offset < AHEAD && block > 0) {
      void this.fetchBlock(block - 1, head);
    }
  }

  private async fetchBlock(block: number, head: number): Promise<void> {
    const first = block * BLOCK + 1;
    const last = Math.min(head, first + BLOCK - 1);
    const missing: number[] = [];
    for (let revision = first; revision <= last; revision++) {
      if (!this.kept.has(revision)) {
        missing.push(revision);
      }
    }
    if (missing.length === 0 || this.fetching.has(block)) {
      return;
    }
    this.fetching.add(block);
    const waiting = new Map<number, { resolve: (source: string) => void; reject: (error: Error) => void }>();
    for (const revision of missing) {
      this.keep(
        revision,
        new Promise<string>((resolve, reject) => waiting.set(revision, { resolve, reject })),
      );
    }
    try {
      for await (const [revision, svg] of this.source.range(missing[0]!, missing[missing.length - 1]!)) {
        const promised = waiting.get(revision);
        if (promised !== undefined) {
          waiting.delete(revision);
          try {
            promised.resolve(pictureSource(svg));
          } catch (error) {
            promised.reject(error as Error);
          }
        }
      }
    } catch {
      // Whatever did not arrive is asked for alone when it is shown.
    } finally {
      for (const promised of waiting.values()) {
        promised.reject(new Error("the replay ended before this picture"));
      }
      this.fetching.delete(block);
    }
  }

  private keep(revision: number, picture: Promise<string>): void {
    this.kept.set(revision, picture);
    picture.catch(() => {
      if (this.kept.get(revision) === picture) {
        this.kept.delete(revision);
      }
    });
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= PICTURES_KEPT) {
        break;
      }
      this.kept.delete(oldest);
    }
  }
}
