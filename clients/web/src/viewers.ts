/**
 * The views the caller may choose among on a game page, as service/recording/entitlement.py grants
 * them: an owner the full view, any seat's and the spectator's; a player the seats bound to
 * them and the spectator's; everyone else the spectator's. "As entitled" (no viewer asked)
 * is always offered and is the server's own choice; a choice it refuses is shown as refused.
 */
import { Role, type WhoAmIResponse } from "@tablelog/client";
import type { Player } from "@tablelog/client";
import type { Viewer } from "@tablelog/client";

export type ViewerKind = Viewer["kind"];

export interface ViewerChoice {
  /** The value of the <option> and of `?view=` in the address: "", "full", "spectator", "seat-2". */
  key: string;
  label: string;
  kind: ViewerKind | undefined;
}

export const AS_ENTITLED: ViewerChoice = { key: "", label: "as I may see it", kind: undefined };

export function viewerChoices(me: WhoAmIResponse | undefined, players: readonly Player[]): ViewerChoice[] {
  const seat = (index: number): ViewerChoice => ({
    key: `seat-${index}`,
    label: `${players[index]?.name ?? `seat ${index}`}'s view`,
    kind: { case: "seat", value: index },
  });
  const spectator: ViewerChoice = { key: "spectator", label: "spectator's view", kind: { case: "spectator", value: true } };
  const role = me?.member?.role;
  const choices = [AS_ENTITLED];
  if (role === Role.OWNER) {
    choices.push({ key: "full", label: "everything", kind: { case: "full", value: true } });
    choices.push(...players.map((_, index) => seat(index)));
  } else if (role === Role.PLAYER) {
    const memberId = me?.member?.memberId;
    players.forEach((player, index) => {
      if (memberId && player.memberId === memberId) {
        choices.push(seat(index));
      }
    });
  }
  choices.push(spectator);
  return choices;
}
