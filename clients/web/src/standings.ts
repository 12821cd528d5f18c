/**
 * Club memory's pages (issue 28): `/standings?game=splendor&season=2026`, a game type's league
 * table, and `/players/<name>?season=2026`, one player's record with their rating over time
 * and their scores' distribution. The charts are the server's SVG (service/memory/charts.py), shown
 * as images like the games' pictures; every other string becomes text, never markup.
 */
import type { GetPlayerRecordResponse, ProjectionLag, Season, StandingRow } from "@tablelog/client";
import type { Api } from "./api.js";
import { el, replaceChildren } from "./dom.js";
import { pictureSource } from "./picture.js";

const MAX_FIELD_CHARS = 64;

function query(name: string): string {
  return (new URLSearchParams(window.location.search).get(name) ?? "").slice(0, MAX_FIELD_CHARS);
}

export function seasonWords(season: Season | undefined): string {
  if (!season?.name) {
    return "overall";
  }
  const day = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString().slice(0, 10);
  const last = new Date((Number(season.endTime?.seconds ?? 0n) - 86_400) * 1000).toISOString().slice(0, 10);
  return `season ${season.name} (${day(season.startTime?.seconds ?? 0n)} to ${last})`;
}

export function lagWords(lag: ProjectionLag | undefined): string {
  if (!lag || lag.pendingGames === 0n) {
    return `up to date (${lag?.projectedGames ?? 0n} ended games)`;
  }
  return `catching up: ${lag.pendingGames} changed game(s), the oldest ${lag.seconds.toFixed(1)} s ago`;
}

function playerLink(name: string, season: string): HTMLAnchorElement {
  const suffix = season ? `?season=${encodeURIComponent(season)}` : "";
  return el("a", { href: `/players/${encodeURIComponent(name)}${suffix}`, class: "player" }, name);
}

function rating(row: StandingRow): string {
  const point = row.rating;
  return point?.gameId ? `${point.ordinal.toFixed(2)} (${point.mu.toFixed(1)} ± ${point.sigma.toFixed(1)})` : "–";
}

export async function showStandings(api: Api, root: HTMLElement): Promise<void> {
  const types = (await api.tablelog.listGameTypes({})).games;
  const game = query("game") || types[0]?.name || "";
  const season = query("season");
  const choose = el("select", { id: "standings-game", name: "game", "aria-label": "game" });
  for (const type of types) {
    choose.append(el("option", { value: type.name, selected: type.name === game }, type.title));
  }
  const seasonInput = el("input", {
    id: "standings-season",
    name: "season",
    value: season,
    placeholder: "season or year (empty: overall)",
    "aria-label": "season",
    maxlength: MAX_FIELD_CHARS,
  });
  const form = el("form", { class: "filters", method: "get", action: "/standings" }, choose, seasonInput, el("button", { type: "submit" }, "Show"));
  const found = await api.standings.getStandings({ game, season });
  const rows = found.rows.map((row, index) =>
    el(
      "tr",
      {},
      el("td", {}, index + 1),
      el("td", {}, playerLink(row.displayName, season)),
      el("td", { class: "number" }, row.games),
      el("td", { class: "number" }, Number(row.wins.toFixed(3))),
      el("td", { class: "number" }, String(row.points)),
      el("td", { class: "number" }, row.averagePlace.toFixed(2)),
      el("td", { class: "number" }, rating(row)),
    ),
  );
  const table = rows.length
    ? el(
        "table",
        { class: "games", id: "standings" },
        el(
          "thead",
          {},
          el("tr", {}, ...["#", "player", "games", "wins", "points", "avg place", "rating (μ ± σ)"].map((h) => el("th", {}, h))),
        ),
        el("tbody", {}, ...rows),
      )
    : el("p", { class: "muted", id: "standings-empty" }, "No ended games yet.");
  replaceChildren(
    root,
    el("h1", {}, "Standings"),
    form,
    el("p", { class: "muted", id: "standings-summary" }, `${found.game}, ${seasonWords(found.season)}: ${found.games} game(s); ${lagWords(found.lag)}`),
    table,
    el("p", { class: "small muted" }, "Rating: OpenSkill (Plackett-Luce); ranked by μ − 3σ, the rating the player is almost surely above. ", el("a", { href: "/" }, "The games")),
  );
}

function chart(svg: string, label: string, id: string): HTMLImageElement {
  return el("img", { src: pictureSource(svg), alt: label, class: "chart", id });
}

export function playerPage(record: GetPlayerRecordResponse, season: string): Node[] {
  const nodes: Node[] = [];
  const player = record.player;
  nodes.push(el("h1", { id: "player-name" }, player?.displayName ?? ""));
  if (player?.aliases.length) {
    nodes.push(el("p", { class: "muted" }, `Also seated as: ${player.aliases.join(", ")}`));
  }
  nodes.push(el("p", { class: "muted", id: "player-summary" }, `${seasonWords(record.season)}; ${lagWords(record.lag)}`));
  if (!record.games.length) {
    nodes.push(el("p", { class: "muted" }, "No ended games in this range."));
  }
  for (const game of record.games) {
    const s = game.standing;
    const section = el(
      "section",
      { class: "panel", "data-game": game.game },
      el("h2", {}, el("a", { href: `/standings?game=${encodeURIComponent(game.game)}${season ? `&season=${encodeURIComponent(season)}` : ""}` }, game.game)),
      el(
        "p",
        { class: "record" },
        `${s?.games ?? 0} game(s), ${Number((s?.wins ?? 0).toFixed(3))} win(s), ${s?.points ?? 0n} points, average place ${(s?.averagePlace ?? 0).toFixed(2)}, rating ${s ? rating(s) : "–"}`,
      ),
      el(
        "div",
        { class: "charts" },
        el("figure", {}, chart(game.ratingChartSvg, `${player?.displayName ?? ""}'s rating over ${game.history.length} games`, `rating-chart-${game.game}`), el("figcaption", {}, "Rating over time")),
        el("figure", {}, chart(game.scoreChartSvg, `${player?.displayName ?? ""}'s scores`, `score-chart-${game.game}`), el("figcaption", {}, "Scores")),
      ),
      el("p", {}, "Places: ", game.places.map((n, i) => `${i + 1}: ${n}`).join(", ")),
    );
    if (game.headToHead.length) {
      section.append(
        el("h3", {}, "Head to head"),
        el(
          "table",
          { class: "games head-to-head" },
          el("thead", {}, el("tr", {}, ...["opponent", "games", "ahead", "level", "behind"].map((h) => el("th", {}, h)))),
          el(
            "tbody",
            {},
            ...game.headToHead.map((h) =>
              el("tr", {}, el("td", {}, playerLink(h.opponentName, season)), el("td", { class: "number" }, h.games), el("td", { class: "number" }, h.ahead), el("td", { class: "number" }, h.level), el("td", { class: "number" }, h.behind)),
            ),
          ),
        ),
      );
    }
    if (game.figures.length) {
      section.append(
        el("h3", {}, "Per game, on average"),
        el(
          "table",
          { class: "games figures" },
          el("tbody", {}, ...game.figures.map((f) => el("tr", { title: f.description }, el("td", {}, f.name.replaceAll("_", " ")), el("td", { class: "number" }, Number(f.average.toFixed(2)))))),
        ),
      );
    }
    nodes.push(section);
  }
  nodes.push(el("p", {}, el("a", { href: "/standings" }, "Standings"), " · ", el("a", { href: "/" }, "The games")));
  return nodes;
}

export async function showPlayer(api: Api, root: HTMLElement, name: string): Promise<void> {
  const season = query("season");
  const record = await api.standings.getPlayerRecord({ name: name.slice(0, MAX_FIELD_CHARS), season });
  replaceChildren(root, ...playerPage(record, season));
}
