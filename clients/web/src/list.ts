/**
 * The game list: newest first, filtered by game, status and player, a page at a time. The
 * filters and the page are in the address (`/?game=splendor&status=ended&player=ann`), so a
 * filtered list can be bookmarked and the back button goes back a page.
 */
import type { GameInfo } from "@tablelog/client";
import { GameStatus, type GameSummary } from "@tablelog/client";
import { describe, type Api } from "./api.js";
import { deciderName } from "./history.js";
import { el, replaceChildren } from "./dom.js";
import { createForm, importForm } from "./create.js";

export const PAGE_SIZE = 20;
/** ListGamesRequest.player's bound (service/limits.py MAX_PLAYER_NAME); longer is refused. */
const MAX_PLAYER_CHARS = 64;
const MAX_FILTER_CHARS = 100;

const STATUSES: ReadonlyArray<[string, GameStatus, string]> = [
  ["", GameStatus.UNSPECIFIED, "any status"],
  ["in-progress", GameStatus.IN_PROGRESS, "in progress"],
  ["ended", GameStatus.ENDED, "ended"],
  ["abandoned", GameStatus.ABANDONED, "abandoned"],
];

export function statusWords(status: GameStatus): string {
  if (status === GameStatus.DELETED) {
    return "deleted"; // listed by no filter, but a page of a deleted game says so
  }
  return STATUSES.find(([, value]) => value === status)?.[2] ?? "unknown";
}

interface Filters {
  game: string;
  status: string;
  player: string;
  /** The API's page token of this page ("" for the first). */
  page: string;
}

function filtersOf(search: string): Filters {
  const query = new URLSearchParams(search);
  const text = (name: string) => (query.get(name) ?? "").slice(0, MAX_FILTER_CHARS);
  return {
    game: text("game"),
    status: text("status"),
    player: text("player").slice(0, MAX_PLAYER_CHARS),
    page: query.get("page") ?? "",
  };
}

function addressOf(filters: Filters): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value) {
      query.set(name, value);
    }
  }
  const text = query.toString();
  return text ? `/?${text}` : "/";
}

interface Page {
  games: GameSummary[];
  next: string;
}

/**
 * A page of the list, every filter applied by the server: the player's name is compared
 * there as a person would (whole names, any case), over every game of the club.
 */
async function fetchPage(api: Api, filters: Filters): Promise<Page> {
  const status = STATUSES.find(([name]) => name === filters.status)?.[1] ?? GameStatus.UNSPECIFIED;
  const answer = await api.tablelog.listGames({
    game: filters.game,
    status,
    player: filters.player,
    pageSize: PAGE_SIZE,
    pageToken: filters.page,
  });
  return { games: answer.games, next: answer.nextPageToken };
}

export async function showList(api: Api, root: HTMLElement): Promise<void> {
  const filters = filtersOf(window.location.search);
  const types = await api.tablelog.listGameTypes({});
  const gameSelect = el("select", { name: "game", "aria-label": "game" }, el("option", { value: "" }, "every game"));
  for (const info of types.games) {
    gameSelect.append(el("option", { value: info.name, selected: info.name === filters.game }, info.title));
  }
  const statusSelect = el("select", { name: "status", "aria-label": "status" });
  for (const [name, , words] of STATUSES) {
    statusSelect.append(el("option", { value: name, selected: name === filters.status }, words));
  }
  const playerInput = el("input", {
    name: "player",
    type: "search",
    placeholder: "player",
    "aria-label": "player",
    maxlength: MAX_PLAYER_CHARS,
    value: filters.player,
  });
  const form = el(
    "form",
    { class: "filters", id: "filters" },
    gameSelect,
    statusSelect,
    playerInput,
    el("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = { game: gameSelect.value, status: statusSelect.value, player: playerInput.value.trim(), page: "" };
    window.location.assign(addressOf(next));
  });
  const body = el("div", { id: "game-list" }, el("p", { class: "muted" }, "Loading games…"));
  const create = el("details", { id: "create" }, el("summary", {}, "New game or import"));
  replaceChildren(root, el("h1", {}, "Games"), create, form, body);

  let page: Page;
  try {
    page = await fetchPage(api, filters);
  } catch (error) {
    replaceChildren(body, el("p", { class: "error", role: "alert" }, describe(error)));
    return;
  }
  create.append(createForm(api, types.games, page.games), importForm(api));
  const titles = new Map(types.games.map((info: GameInfo) => [info.name, info.title]));
  const rows = page.games.map((game) => gameRow(game, titles));
  const table = rows.length
    ? el(
        "table",
        { class: "games" },
        el(
          "thead",
          {},
          el("tr", {}, el("th", {}, "game"), el("th", {}, "players"), el("th", {}, "status"), el("th", {}, "moves"), el("th", {}, "updated")),
        ),
        el("tbody", {}, ...rows),
      )
    : el("p", { class: "muted", id: "no-games" }, "No games match.");
  const pager = el("nav", { class: "pager", "aria-label": "pages" });
  if (filters.page) {
    pager.append(el("a", { href: addressOf({ ...filters, page: "" }), id: "first-page", class: "button" }, "← Newest"));
  }
  if (page.next) {
    pager.append(el("a", { href: addressOf({ ...filters, page: page.next }), id: "next-page", class: "button" }, "Older →"));
  }
  replaceChildren(body, table, pager);
}

/** An ended game's result in the list: " · won by Bob · Ann 17, Bob 17 · tie-break: fewest
 * development cards purchased" (or " · shared win: Ann and Bob · ..."): the winners, each
 * player's points and the tie-break the server's result names (the rules are the server's). */
function finalWords(game: GameSummary): string {
  const result = game.result;
  if (game.status !== GameStatus.ENDED || result === undefined || result.scores.length === 0) {
    return "";
  }
  const name = (seat: number) => game.players[seat]?.name ?? `seat ${seat}`;
  const winners = result.winners.map(name).join(" and ");
  const won = result.winners.length > 1 ? ` · shared win: ${winners}` : result.winners.length ? ` · won by ${winners}` : "";
  const scores = [...result.scores].sort((a, b) => Number(b.total - a.total));
  const tiebreak = result.tiebreak ? ` · tie-break: ${result.tiebreak}` : "";
  return `${won} · ${scores.map((s) => `${name(s.seat)} ${s.total}`).join(", ")}${tiebreak}`;
}

function gameRow(game: GameSummary, titles: ReadonlyMap<string, string>): HTMLTableRowElement {
  const title = game.title || titles.get(game.game) || game.game;
  const updated = game.updatedTime ? new Date(Number(game.updatedTime.seconds) * 1000) : undefined;
  const status =
    game.status === GameStatus.IN_PROGRESS
      ? `in progress · ${deciderName(game.toMove, game.players)} to move`
      : `${statusWords(game.status)}${finalWords(game)}`;
  return el(
    "tr",
    { "data-game-id": game.gameId },
    el(
      "td",
      {},
      el("a", { href: `/games/${encodeURIComponent(game.gameId)}` }, title),
      el("div", { class: "muted small" }, `${titles.get(game.game) ?? game.game} · ${game.gameId}`),
    ),
    el("td", {}, game.players.map((p) => p.name).join(", ")),
    el("td", {}, status),
    // The players' moves, as the text record numbers them (the table's reveals not
    // counted); a summary stored before the server counted them gives every move.
    el("td", { class: "number" }, game.playerMoveCount ?? game.moveCount),
    el("td", {}, updated ? el("time", { datetime: updated.toISOString() }, updated.toLocaleString()) : ""),
  );
}
