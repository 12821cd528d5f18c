/**
 * Composing a move by taps on the picture (issue 25): the listed moves narrowed by the taps
 * so far. No rule is here: the server lists each legal move with its touches
 * (`LegalMove.touches`, the `data-touch` ids of the picture, in tap order, or in any order
 * for a move whose parts have none), and still checks the move recorded.
 *
 * The narrowing runs in the browser from the listed moves: the longest list (Castello
 * Methoni, a few hundred moves of up to five taps) is narrowed in well under a
 * millisecond, so asking the server on each tap would only add a round trip.
 */

export interface Touchable {
  readonly notation: string;
  readonly touches: readonly string[];
  readonly anyOrder: boolean;
  /** The move in a player's words, as the server says it for this viewer
   * (`LegalMove.words`: "Ann buys 1k0:g3 from slot 1.3"); empty from a server without. */
  readonly words?: string;
}

/** Whether `taps` can still become `move`'s touches: a prefix, or (any order) a part. */
export function fits(move: Touchable, taps: readonly string[]): boolean {
  if (taps.length > move.touches.length) {
    return false;
  }
  if (!move.anyOrder) {
    return taps.every((tap, index) => move.touches[index] === tap);
  }
  const left = new Map<string, number>();
  for (const touch of move.touches) {
    left.set(touch, (left.get(touch) ?? 0) + 1);
  }
  for (const tap of taps) {
    const count = left.get(tap) ?? 0;
    if (count === 0) {
      return false;
    }
    left.set(tap, count - 1);
  }
  return true;
}

/** The moves still possible after `taps`. */
export function narrow<T extends Touchable>(moves: readonly T[], taps: readonly string[]): T[] {
  return moves.filter((move) => move.touches.length > 0 && fits(move, taps));
}

/** The moves `taps` names completely (all their touches tapped). */
export function complete<T extends Touchable>(candidates: readonly T[], taps: readonly string[]): T[] {
  return candidates.filter((move) => move.touches.length === taps.length);
}

/** The ids that may be tapped next: one more tap that keeps some candidate possible. */
export function nextTaps(candidates: readonly Touchable[], taps: readonly string[]): Set<string> {
  const next = new Set<string>();
  for (const move of candidates) {
    if (move.touches.length <= taps.length) {
      continue;
    }
    if (!move.anyOrder) {
      next.add(move.touches[taps.length]!);
      continue;
    }
    const left = [...move.touches];
    for (const tap of taps) {
      left.splice(left.indexOf(tap), 1);
    }
    for (const touch of left) {
      next.add(touch);
    }
  }
  return next;
}
