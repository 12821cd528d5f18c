/**
 * A game's page: its picture at a revision, the move list with names, glyphs and comments,
 * stepping (arrow keys, Home/End, a click on a move), the revision and the view in the
 * address (`/games/<id>?r=12&view=seat-1`), live updates while the game is on (resuming
 * after the last revision seen when the stream drops), annotating (with an alternative
 * line), stepping into an annotation's variation (`?r=12&v=<annotation id>&vm=2`, and
 * `&vl=3.1` for a nested line), and recording.
 *
 * The move list, the position shown and the address stay in step: every change of the
 * position goes through `go` (the main line) or `goInto` (a variation), every new revision
 * through `addStep`.
 */
import { Role, type WhoAmIResponse } from "@tablelog/client";
import {
  GameStatus,
  PictureLayout,
  type Annotation,
  type GameSummary,
  type Player,
  type ReplayGameResponse,
  type SeatScore,
} from "@tablelog/client";
import { describe, isCancelled, reasonOf, requestId, type Api } from "./api.js";
import { el, replaceChildren, typingInto } from "./dom.js";
import { deciderName, entryOf, isHistoryStep, unverifiedImport, type Entry } from "./history.js";
import { statusWords } from "./list.js";
import { Pictures } from "./picture.js";
import type { Touchable } from "./touch.js";
import { TouchBoard } from "./touchboard.js";
import {
  describeRefusal,
  lineText,
  MAX_VARIATION_MOVES,
  movesOf,
  parseLine,
  pathKey,
  replayLine,
  typedLine,
  type LinePath,
  type VariationStep,
} from "./variations.js";
import { AS_ENTITLED, viewerChoices, type ViewerChoice } from "./viewers.js";

/** Legal moves listed at most (the API's largest page). */
const LEGAL_MOVES_SHOWN = 1000;
/** As the service bounds them (service/limits.py). */
const MAX_NOTATION = 200;
const MAX_COMMENT = 4000;
const GLYPHS = ["", "!", "?", "!!", "??", "!?", "?!"];
/** How long to wait before watching again after the stream drops: doubling up to the cap. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;
const ANNOTATIONS_PAGE = 1000;
/** Address parameters of a variation shown: the annotation, the move and a nested line. */
const IN_VARIATION = ["v", "vm", "vl"];

/** The variation being stepped through: its line as the server replayed it. */
interface Inside {
  path: LinePath;
  anchor: number;
  steps: VariationStep[];
  /** The move shown, from 1. */
  number: number;
}

/** The smallest touch target, in CSS px, a zoomed board gives (WCAG 2.5.5). */
const TARGET_PX = 44;
/** A screen this narrow asks for the pictures laid out for a phone (issue 25: one column,
 * touchables of 44 px fit to the width where the game allows it); the client holds no
 * rules, only this choice of layout. */
const PHONE_SCREEN = "(max-width: 600px)";

function pictureLayout(): PictureLayout {
  return window.matchMedia(PHONE_SCREEN).matches ? PictureLayout.PHONE : PictureLayout.UNSPECIFIED;
}

export async function showGame(api: Api, root: HTMLElement, gameId: string, me: WhoAmIResponse | undefined): Promise<void> {
  const summary = (await api.tablelog.getGame({ gameId })).game;
  if (summary === undefined) {
    throw new Error("the server answered no game");
  }
  await new GamePage(api, root, summary, me).start();
}

class GamePage {
  private readonly gameId: string;
  private readonly entries = new Map<number, Entry>();
  /** Annotations imported unverified (id -> what to say of them), from the replayed events. */
  private readonly unverifiedNotes = new Map<string, string>();
  private readonly items = new Map<number, HTMLLIElement>();
  private annotations: Annotation[] = [];
  private readonly choices: ViewerChoice[];
  /** Whether the caller's role may record and annotate (the server decides; this only
   * spares a spectator controls that could only be refused). */
  private readonly mayChange: boolean;
  private choice: ViewerChoice = AS_ENTITLED;
  private pictures: Pictures;
  /** The last revision listed. */
  private head = 0;
  /** The revision shown. */
  private current = 0;
  private live: AbortController | undefined;
  private legalMoves: string[] = [];
  /** What each legal move takes by place only (`buy 1.3` → `1k0:g3`), shown beside it. */
  private legalDetails = new Map<string, string>();
  /** Each listed move in the server's words for this viewer (`LegalMove.words`). */
  private legalWords = new Map<string, string>();
  /** The variation shown, while one is. */
  private inside: Inside | undefined;
  /** Each line's replay with pictures for the current view, by `pathKey`. */
  private lines = new Map<string, Promise<VariationStep[]>>();
  /** Who made each variation move, by `pathKey` of its line (the server's replay). */
  private movers = new Map<string, string[]>();

  private readonly title = el("h1", { id: "game-title" });
  private readonly facts = el("p", { class: "muted", id: "game-facts" });
  private readonly status = el("span", { id: "game-status" });
  private readonly liveStatus = el("span", { id: "live-status", class: "muted", "aria-live": "polite" });
  private readonly viewerSelect = el("select", { id: "viewer", "aria-label": "view" });
  private readonly viewerError = el("p", { class: "error", id: "viewer-error", role: "alert" });
  private readonly revisionLabel = el("span", { id: "revision" });
  private readonly currentPlayer = el("span", { id: "current-player", class: "player" });
  private readonly currentMove = el("span", { id: "current-move", class: "move" });
  private readonly toMove = el("p", { id: "to-move", class: "muted" });
  private readonly picture = el("img", { id: "picture", alt: "", class: "picture" });
  private readonly pictureError = el("p", { class: "error", id: "picture-error", role: "alert" });
  private readonly variationStatus = el("span", { id: "variation-status" });
  private readonly variationBar = el("p", { id: "variation-bar", class: "variation-bar" });
  private readonly moveList = el("ol", { id: "moves", class: "moves" });
  private readonly glyphSelect = el("select", { id: "annotation-glyph", "aria-label": "glyph" });
  private readonly commentInput = el("textarea", {
    id: "annotation-comment",
    "aria-label": "comment",
    maxlength: MAX_COMMENT,
    rows: 2,
    placeholder: "Comment on the move shown",
  });
  private readonly variationInput = el("textarea", {
    id: "annotation-variation",
    "aria-label": "alternative line",
    maxlength: MAX_VARIATION_MOVES * (MAX_NOTATION + 1),
    rows: 2,
    spellcheck: "false",
    autocapitalize: "none",
    placeholder: "Alternative line (optional): moves in notation, one per line or separated by ;",
  });
  private readonly annotationError = el("p", { class: "error", id: "annotation-error", role: "alert" });
  private readonly recorder = el("section", { id: "recorder", class: "panel", "aria-label": "record" });
  private readonly legalFilter = el("input", {
    id: "legal-filter",
    type: "search",
    placeholder: "filter the legal moves",
    "aria-label": "filter the legal moves",
    maxlength: MAX_NOTATION,
  });
  private readonly legalList = el("ul", { id: "legal-moves", class: "legal" });
  private readonly legalNote = el("p", { id: "legal-note", class: "muted" });
  private readonly notationInput = el("input", {
    id: "notation",
    type: "text",
    autocomplete: "off",
    autocapitalize: "none",
    spellcheck: "false",
    placeholder: "the move, in notation",
    "aria-label": "move notation",
    maxlength: MAX_NOTATION,
  });
  private readonly recordButton = el("button", { type: "submit", id: "record" }, "Record");
  private readonly recordError = el("p", { class: "error", id: "record-error", role: "alert" });
  private readonly recordNote = el("p", { class: "muted", id: "record-note", "aria-live": "polite" });
  /** What the recording panel says of the revision shown (recording happens at the head). */
  private readonly recordAt = el("p", { id: "record-at", class: "muted", "aria-live": "polite" });
  private readonly recordControls = el("div", { id: "record-controls" });
  private readonly goHead = el("button", { type: "button", id: "go-head" }, "Go to the latest revision");
  private readonly zoom = el("button", { type: "button", id: "zoom", "aria-pressed": "false", title: "zoom the board" }, "Zoom");
  private readonly boardScroll = el("div", { id: "board-scroll", class: "board-scroll" });
  /** The final scores of an ended game: names, points, breakdown, tie-break, winner. */
  private readonly scores = el("section", { id: "scores", class: "panel", "aria-label": "final scores", hidden: true });
  private readonly shareButton = el("button", { type: "button", id: "share" }, "Share");
  private readonly shareNote = el("p", { id: "share-note", class: "muted small", "aria-live": "polite" });
  /** The club's owner deletes the game (DeleteGame): kept and verifiable, off the list. */
  private readonly deleteButton = el("button", { type: "button", id: "delete-game" }, "Delete game");
  private readonly mayDelete: boolean;
  private readonly board = new TouchBoard({
    record: (notation) => this.recordTapped(notation),
    decider: () => this.legalDecider,
    zoomAt: (x, y) => this.zoomAt(x, y),
    zoomed: () => this.boardScroll.classList.contains("zoomed"),
  });
  /** The listed moves with their touches, the revision they were listed at, and who decides. */
  private touchables: Touchable[] = [];
  private legalRevision = -1;
  private legalDecider = "";
  /** The head revision whose picture the board shows, -1 when none. */
  private boardRevision = -1;

  constructor(
    private readonly api: Api,
    private readonly root: HTMLElement,
    private summary: GameSummary,
    me: WhoAmIResponse | undefined,
  ) {
    this.gameId = summary.gameId;
    this.choices = viewerChoices(me, summary.players);
    this.pictures = this.picturesFor(this.choice);
    this.mayChange = me?.member?.role !== Role.SPECTATOR && !me?.gameId;
    this.mayDelete = me?.member?.role === Role.OWNER && !me?.gameId;
  }

  async start(): Promise<void> {
    const query = new URLSearchParams(window.location.search);
    this.choice = this.choices.find((c) => c.key === query.get("view")) ?? AS_ENTITLED;
    this.pictures = this.picturesFor(this.choice);
    this.layout();
    this.showSummary();
    await this.loadHistory();
    await this.loadAnnotations();
    const asked = Number.parseInt(query.get("r") ?? "", 10);
    this.go(Number.isFinite(asked) && asked > 0 ? asked : this.head);
    const annotationId = query.get("v");
    const line = parseLine(query.get("vl") ?? "");
    const number = Number.parseInt(query.get("vm") ?? "", 10);
    if (annotationId && line !== undefined && Number.isFinite(number)) {
      await this.goInto({ annotationId, line }, number);
    }
    this.followIfLive();
    if (this.inProgress()) {
      void this.loadLegalMoves();
    }
  }

  private viewer() {
    return this.choice.kind === undefined ? undefined : { kind: this.choice.kind };
  }

  private inProgress(): boolean {
    return this.summary.status === GameStatus.IN_PROGRESS;
  }

  // --- layout -------------------------------------------------------------------------

  private layout(): void {
    for (const choice of this.choices) {
      this.viewerSelect.append(el("option", { value: choice.key, selected: choice === this.choice }, choice.label));
    }
    this.viewerSelect.addEventListener("change", () => void this.changeViewer(this.viewerSelect.value));
    for (const glyph of GLYPHS) {
      this.glyphSelect.append(el("option", { value: glyph }, glyph || "no glyph"));
    }

    const step = (text: string, id: string, key: string, keys: string) => {
      const button = el("button", { type: "button", id, "aria-label": id, title: `${id} (${keys})` }, text);
      button.addEventListener("click", () => this.stepKey(key));
      return button;
    };
    const stepper = el(
      "div",
      { class: "stepper" },
      step("«", "first", "Home", "Home"),
      step("◀", "previous", "ArrowLeft", "←"),
      this.revisionLabel,
      step("▶", "next", "ArrowRight", "→"),
      step("»", "last", "End", "End"),
    );
    const leave = el("button", { type: "button", id: "leave-variation", title: "back to the game (Escape)" }, "back to the game");
    leave.addEventListener("click", () => this.leaveVariation());
    replaceChildren(this.variationBar, this.variationStatus, " ", leave);
    this.variationBar.hidden = true;
    const annotate = el(
      "form",
      { id: "annotate", class: "panel" },
      el("h2", {}, "Annotate the move shown"),
      el("div", { class: "row" }, this.glyphSelect, this.commentInput),
      el("div", { class: "row" }, this.variationInput),
      el("button", { type: "submit", id: "annotate-submit" }, "Add"),
      this.annotationError,
    );
    annotate.hidden = !this.mayChange;
    annotate.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.annotate();
    });
    this.layoutRecorder();

    replaceChildren(
      this.root,
      el(
        "div",
        { class: "game-head" },
        el("p", { class: "muted back" }, el("a", { href: "/" }, "← games")),
        this.title,
        this.facts,
        el(
          "div",
          { class: "row status" },
          el("p", {}, this.status, " ", this.liveStatus),
          el("label", { class: "viewer" }, "View: ", this.viewerSelect),
          this.shareButton,
          this.deleteButton,
        ),
        this.shareNote,
        this.viewerError,
        this.scores,
      ),
      el(
        "div",
        { class: "game" },
        el(
          "section",
          { class: "board", "aria-label": "position" },
          stepper,
          this.variationBar,
          el("p", { class: "current" }, this.currentPlayer, " ", this.currentMove),
          this.toMove,
          el("div", { class: "board-tools" }, this.board.hint, this.zoom),
          this.boardScroll,
          this.pictureError,
          this.board.bar,
        ),
        el(
          "aside",
          { class: "side" },
          el("section", { class: "panel", "aria-label": "moves" }, el("h2", {}, "Moves"), this.moveList),
          this.recorder,
          annotate,
        ),
      ),
    );
    this.boardScroll.append(el("div", { class: "board-frame", id: "board-frame" }, this.picture, this.board.overlay));
    this.zoom.addEventListener("click", () => this.toggleZoom());
    // A phone turned (or a window narrowed) past the phone's width asks for the other
    // layout's pictures: a picture of each layout is its own (cached, immutable) answer.
    window.matchMedia(PHONE_SCREEN).addEventListener("change", () => {
      this.pictures = this.picturesFor(this.choice);
      this.boardRevision = -1;
      if (this.inside === undefined) {
        void this.showPicture(this.current);
      }
    });
    this.shareButton.hidden = !this.mayChange;
    this.shareButton.addEventListener("click", () => void this.share());
    this.deleteButton.addEventListener("click", () => void this.deleteGame());
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  private layoutRecorder(): void {
    const form = el("form", { id: "record-form", class: "row" }, this.notationInput, this.recordButton);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.record();
    });
    const undo = el("button", { type: "button", id: "undo" }, "Undo");
    undo.addEventListener("click", () => void this.change("undo"));
    const redo = el("button", { type: "button", id: "redo" }, "Redo");
    redo.addEventListener("click", () => void this.change("redo"));
    this.legalFilter.addEventListener("input", () => this.showLegalMoves());
    this.legalList.addEventListener("click", (event) => {
      const target = event.target instanceof Element ? event.target.closest("button[data-notation]") : null;
      if (target instanceof HTMLButtonElement) {
        this.notationInput.value = target.dataset["notation"] ?? "";
        this.notationInput.focus();
      }
    });
    this.goHead.addEventListener("click", () => this.go(this.head));
    replaceChildren(
      this.recordControls,
      form,
      this.recordError,
      this.recordNote,
      el("div", { class: "row" }, undo, redo),
      el("h3", {}, "Legal moves"),
      this.legalFilter,
      this.legalNote,
      this.legalList,
    );
    replaceChildren(this.recorder, el("h2", {}, "Record"), this.recordAt, this.goHead, this.recordControls);
  }

  private showSummary(): void {
    const game = this.summary;
    this.title.textContent = game.title || game.game;
    this.facts.textContent = `${game.game} · ${game.players.map((p) => p.name).join(", ")} · ${game.gameId}`;
    const result = game.result?.winners.length
      ? ` · won by ${game.result.winners.map((seat) => game.players[seat]?.name ?? `seat ${seat}`).join(" and ")}`
      : "";
    const deleted = game.status === GameStatus.DELETED;
    this.status.textContent = this.inProgress()
      ? `In progress · ${deciderName(game.toMove, game.players)} to move`
      : deleted
        ? deletionWords(game)
        : `${statusWords(game.status)}${result}`;
    this.recorder.hidden = !this.mayChange || !this.inProgress();
    this.deleteButton.hidden = !this.mayDelete || deleted;
    const annotate = this.root.querySelector<HTMLElement>("#annotate");
    if (annotate && deleted) {
      annotate.hidden = true; // a deleted game takes no change
    }
    document.title = `${this.title.textContent} · tablelog`;
    this.showScores();
  }

  /** An ended game's final score table, from the game's result. */
  private showScores(): void {
    const result = this.summary.result;
    if (this.inProgress() || result === undefined || result.scores.length === 0) {
      this.scores.hidden = true;
      return;
    }
    const players = this.summary.players;
    const winners = new Set(result.winners);
    const rows = [...result.scores].sort((a, b) => Number(b.total - a.total));
    replaceChildren(
      this.scores,
      el("h2", {}, "Final scores"),
      el(
        "table",
        { class: "scores" },
        el("thead", {}, el("tr", {}, el("th", {}, "player"), el("th", { class: "number" }, "points"), el("th", {}, "breakdown"), el("th", {}, ""))),
        el(
          "tbody",
          {},
          ...rows.map((score) =>
            el(
              "tr",
              { "data-seat": score.seat, class: winners.has(score.seat) ? "winner" : undefined },
              el("td", {}, players[score.seat]?.name ?? `seat ${score.seat}`),
              el("td", { class: "number" }, String(score.total)),
              el("td", { class: "small" }, score.items.map((item) => `${item.label} ${item.value}`).join(", ")),
              el("td", {}, winners.has(score.seat) ? (winners.size > 1 ? "shared win" : "winner") : ""),
            ),
          ),
        ),
      ),
      result.tiebreak ? el("p", { id: "tiebreak" }, `Tie-break: ${result.tiebreak} (${tiedWords(result.scores, players)})`) : null,
    );
    this.scores.hidden = false;
  }

  /** The owner deletes the game after saying yes: the server appends a tombstone (the game
   * is kept and still verifies), the list and the standings leave it out, and nothing more
   * can be recorded in it. */
  private async deleteGame(): Promise<void> {
    const sure = window.confirm(
      "Delete this game? It leaves the club's list and standings and nothing more can be " +
        "recorded in it; it is kept, and still verifies. This cannot be taken back.",
    );
    if (!sure) {
      return;
    }
    this.shareNote.textContent = "";
    try {
      const answer = await this.api.tablelog.deleteGame({ gameId: this.gameId, requestId: requestId(), reason: "" });
      if (answer.game) {
        this.summary = answer.game;
      }
      this.showSummary();
      this.shareNote.textContent = "Deleted: the game is kept and still verifies, but is listed nowhere.";
    } catch (error) {
      this.shareNote.textContent = `Not deleted: ${describe(error)}`;
    }
  }

  /** A read-only link to this game, copied for the club's chat (the token in the
   * fragment, which a browser never sends to a server). */
  private async share(): Promise<void> {
    this.shareNote.textContent = "";
    try {
      const created = await this.api.clubs.createLinkToken({ gameId: this.gameId });
      const link = `${window.location.origin}/games/${encodeURIComponent(this.gameId)}#token=${created.token}`;
      try {
        // A browser may ask the user first, or never answer: the link is shown either way.
        await Promise.race([
          navigator.clipboard.writeText(link),
          new Promise((_, reject) => window.setTimeout(() => reject(new Error("no answer")), 1500)),
        ]);
        this.shareNote.textContent = "A read-only link is copied: ";
      } catch {
        this.shareNote.textContent = "A read-only link (copy it): ";
      }
      this.shareNote.append(el("a", { href: link, id: "share-link" }, link));
    } catch (error) {
      this.shareNote.textContent = `No link: ${describe(error)}`;
    }
  }

  // --- the history ----------------------------------------------------------------------

  private async loadHistory(): Promise<void> {
    this.entries.clear();
    this.items.clear();
    this.moveList.replaceChildren();
    this.head = 0;
    this.lines.clear();
    const stream = this.api.tablelog.replayGame({
      gameId: this.gameId,
      fromRevision: 1n,
      toRevision: 0n,
      viewer: this.viewer(),
    });
    for await (const item of stream) {
      this.addStep(item);
    }
  }

  /** Lists a replayed or watched step; true when it was new. Steps come in order. */
  private addStep(item: ReplayGameResponse): boolean {
    const added = item.event?.body.case === "annotationAdded" ? item.event.body.value : undefined;
    if (added !== undefined && unverifiedImport(item.event)) {
      this.unverifiedNotes.set(added.annotationId, unverifiedImport(item.event));
    }
    if (!isHistoryStep(item)) {
      return false;
    }
    const entry = entryOf(item, this.entries, this.summary.players);
    if (entry === undefined || entry.revision !== this.head + 1) {
      return false;
    }
    this.entries.set(entry.revision, entry);
    this.head = entry.revision;
    // The players' moves numbered as the text record numbers them (`17.`), the table's
    // events marked `*`; the revision, which the API and the address take, beside it.
    const label = entry.number ? `${entry.number}.` : entry.kind === "move" ? "*" : "";
    const button = el(
      "button",
      { type: "button", class: "step", "data-revision": entry.revision, title: `revision ${entry.revision}` },
      el("span", { class: "rev" }, label),
      el("span", { class: "player" }, entry.player),
      el(
        "span",
        { class: "move" },
        entry.text,
        el("span", { class: "muted small" }, ` r${entry.revision}`),
        entry.unverified ? el("span", { class: "unverified", title: entry.unverified }, " (unverified import)") : null,
      ),
      el("span", { class: "glyphs" }),
    );
    button.addEventListener("click", () => this.go(entry.revision));
    const setup = this.inSetup(entry);
    const listed = el(
      "li",
      {
        class: `entry ${entry.kind}${setup ? " setup" : ""}${entry.unverified ? " unverified" : ""}`,
        "data-revision": entry.revision,
      },
      button,
      el("div", { class: "notes" }),
    );
    this.items.set(entry.revision, listed);
    this.moveList.append(listed);
    if (setup) {
      this.foldSetup(entry.revision);
    }
    this.showNotes(entry.revision);
    return true;
  }

  /**
   * Whether `entry` is one of the table's events before the first player's move: every move
   * up to it was the table's decision (a chance move), as the server's `toMove` before each
   * says, not as a name reads (a player may be called "table").
   */
  private inSetup(entry: Entry): boolean {
    if (entry.revision <= 1) {
      return false;
    }
    for (let revision = entry.revision; revision > 1; revision -= 1) {
      if (!this.byTable(this.entries.get(revision))) {
        return false;
      }
    }
    return true;
  }

  /** Whether `entry` is a move the table decided: the server had a chance decision due before it. */
  private byTable(entry: Entry | undefined): boolean {
    if (entry === undefined || entry.kind !== "move") {
      return false;
    }
    return this.entries.get(entry.revision - 1)?.toMove?.who.case === "chance";
  }

  /**
   * The setup's reveals folded into one row (issue 26), "setup: 15 table events", which
   * opens them; they open by themselves while the position shown is one of them.
   */
  private foldSetup(last: number): void {
    let row = this.moveList.querySelector<HTMLLIElement>("li.setup-row");
    if (row === null) {
      const button = el("button", { type: "button", class: "step setup-toggle", "aria-expanded": "false" });
      button.addEventListener("click", () => {
        const open = button.getAttribute("aria-expanded") !== "true";
        button.setAttribute("aria-expanded", String(open));
        this.moveList.classList.toggle("setup-open", open);
      });
      row = el("li", { class: "entry setup-row" }, button);
      this.items.get(last)?.before(row);
    }
    const count = this.moveList.querySelectorAll("li.setup").length;
    const first = this.moveList.querySelector<HTMLLIElement>("li.setup")?.dataset["revision"] ?? String(last);
    const toggle = row.querySelector("button");
    if (toggle !== null) {
      toggle.replaceChildren(
        el("span", { class: "rev" }, "*"),
        el("span", { class: "player" }, "table"),
        el("span", { class: "move" }, `setup: ${count} table event${count === 1 ? "" : "s"}`, el("span", { class: "muted small" }, ` r${first}–r${last}`)),
      );
    }
  }

  /** The steps after the last one listed, up to the head the server has now. */
  private async catchUp(): Promise<void> {
    if (BigInt(this.head) >= this.summary.version) {
      return;
    }
    const stream = this.api.tablelog.replayGame({
      gameId: this.gameId,
      fromRevision: BigInt(this.head + 1),
      toRevision: 0n,
      viewer: this.viewer(),
    });
    for await (const item of stream) {
      this.addStep(item);
    }
    this.showPosition();
  }

  private async refreshSummary(): Promise<void> {
    const game = (await this.api.tablelog.getGame({ gameId: this.gameId })).game;
    if (game !== undefined) {
      this.summary = game;
      this.showSummary();
    }
  }

  // --- stepping ---------------------------------------------------------------------------

  private onKey(event: KeyboardEvent): void {
    if (event.altKey || event.ctrlKey || event.metaKey || typingInto(event.target)) {
      return;
    }
    if (this.stepKey(event.key)) {
      event.preventDefault();
    }
  }

  /** Steps as the key says, within the variation shown if any; true when the key steps. */
  private stepKey(key: string): boolean {
    const inside = this.inside;
    if (inside !== undefined) {
      const to: Record<string, () => number> = {
        ArrowLeft: () => inside.number - 1,
        ArrowRight: () => inside.number + 1,
        Home: () => 1,
        End: () => inside.steps.length,
      };
      if (key === "Escape") {
        this.leaveVariation();
        return true;
      }
      const target = to[key];
      if (target !== undefined) {
        this.showStep(inside, Math.min(Math.max(target(), 1), inside.steps.length));
      }
      return target !== undefined;
    }
    const to: Record<string, () => number> = {
      ArrowLeft: () => this.current - 1,
      ArrowRight: () => this.current + 1,
      Home: () => 1,
      End: () => this.head,
    };
    const target = to[key];
    if (target !== undefined) {
      this.go(target());
    }
    return target !== undefined;
  }

  /** Shows `revision` (clamped to the history): the list, the address and the picture. */
  go(revision: number): void {
    const target = Math.min(Math.max(revision, 1), this.head);
    if (target < 1) {
      return;
    }
    const wasInside = this.closeVariation();
    if (target !== this.current || wasInside) {
      this.items.get(this.current)?.removeAttribute("aria-current");
      this.current = target;
      const item = this.items.get(target);
      if (item?.classList.contains("setup")) {
        this.moveList.classList.add("setup-open");
        this.moveList.querySelector("button.setup-toggle")?.setAttribute("aria-expanded", "true");
      }
      item?.setAttribute("aria-current", "step");
      item?.scrollIntoView({ block: "nearest" });
      const query = new URLSearchParams(window.location.search);
      query.set("r", String(target));
      for (const name of IN_VARIATION) {
        query.delete(name);
      }
      if (this.choice.key) {
        query.set("view", this.choice.key);
      } else {
        query.delete("view");
      }
      window.history.replaceState(window.history.state, "", `${window.location.pathname}?${query.toString()}`);
    }
    this.showPosition();
    void this.showPicture(target);
  }

  // --- variations -------------------------------------------------------------------------

  /** Shows move `number` of the variation line `path` (clamped to the line): the main line
   * at the annotated revision, the variation's move, its picture and the address. */
  private async goInto(path: LinePath, number: number): Promise<void> {
    const note = this.annotations.find((found) => found.annotationId === path.annotationId);
    const moves = note?.variation ? movesOf(note.variation, path.line) : undefined;
    if (note === undefined || moves === undefined || moves.length === 0) {
      this.pictureError.textContent = `No variation ${pathKey(path)} in this game.`;
      return;
    }
    const anchor = Number(note.revision);
    const key = pathKey(path);
    let line = this.lines.get(key);
    if (line === undefined) {
      line = replayLine(this.api, this.gameId, anchor, path, this.viewer(), this.summary.players, {
        picture: true,
        firstMover: this.firstMover(path),
      });
      this.lines.set(key, line);
      const asked = line;
      asked.catch(() => {
        if (this.lines.get(key) === asked) {
          this.lines.delete(key);
        }
      });
    }
    const choice = this.choice;
    let steps: VariationStep[];
    try {
      steps = await line;
    } catch (error) {
      this.pictureError.textContent = `No variation: ${describe(error)}`;
      return;
    }
    if (choice !== this.choice || steps.length === 0) {
      return;
    }
    this.go(anchor);
    this.inside = { path, anchor, steps, number: 1 };
    this.showStep(this.inside, Math.min(Math.max(number, 1), steps.length));
  }

  /** Who made the first move of a nested line: whoever made the move it replaces. */
  private firstMover(path: LinePath): string | undefined {
    if (path.line.length === 0) {
      return undefined;
    }
    const parent = { annotationId: path.annotationId, line: path.line.slice(0, -2) };
    return this.movers.get(pathKey(parent))?.[path.line[path.line.length - 2]! - 1];
  }

  private showStep(inside: Inside, number: number): void {
    inside.number = number;
    const step = inside.steps[number - 1];
    if (step === undefined) {
      return;
    }
    const key = pathKey(inside.path);
    this.revisionLabel.textContent = `Revision ${inside.anchor} of ${this.head}`;
    this.variationStatus.textContent = `Variation: move ${number} of ${inside.steps.length}, instead of revision ${inside.anchor}`;
    this.variationBar.hidden = false;
    this.currentPlayer.textContent = step.player;
    this.currentMove.textContent = step.notation;
    const decider = deciderName(step.toMove, this.summary.players);
    this.toMove.textContent = step.toMove?.who.case === "terminal" ? "Game over" : decider ? `${decider} to move` : "";
    this.picture.src = step.picture;
    this.picture.alt = `${this.title.textContent}: variation ${key}, move ${number}`;
    this.picture.dataset["revision"] = String(inside.anchor);
    this.picture.dataset["view"] = this.choice.key;
    this.picture.dataset["variation"] = key;
    this.picture.dataset["variationMove"] = String(number);
    this.pictureError.textContent = "";
    this.markVariationMove();

    const query = new URLSearchParams(window.location.search);
    query.set("r", String(inside.anchor));
    query.set("v", inside.path.annotationId);
    query.set("vm", String(number));
    const line = lineText(inside.path.line);
    if (line) {
      query.set("vl", line);
    } else {
      query.delete("vl");
    }
    window.history.replaceState(window.history.state, "", `${window.location.pathname}?${query.toString()}`);
  }

  /** Marks the variation move shown in the move list (none outside a variation). */
  private markVariationMove(): void {
    for (const marked of this.moveList.querySelectorAll("button.variation-move[aria-current]")) {
      marked.removeAttribute("aria-current");
    }
    const inside = this.inside;
    if (inside === undefined) {
      return;
    }
    const key = pathKey(inside.path);
    for (const button of this.moveList.querySelectorAll<HTMLButtonElement>("button.variation-move")) {
      if (button.dataset["path"] === key && button.dataset["move"] === String(inside.number)) {
        button.setAttribute("aria-current", "step");
        button.scrollIntoView({ block: "nearest" });
      }
    }
  }

  /** Back to the main line, at the variation's revision. */
  private leaveVariation(): void {
    const inside = this.inside;
    if (inside !== undefined) {
      this.go(inside.anchor);
    }
  }

  /** Stops showing a variation; true when one was shown. */
  private closeVariation(): boolean {
    if (this.inside === undefined) {
      return false;
    }
    this.inside = undefined;
    this.variationBar.hidden = true;
    this.markVariationMove();
    return true;
  }

  /** Who made each move of every line of `note`'s variation, as the server replays them. */
  private async loadMovers(note: Annotation, line: readonly number[], firstMover: string | undefined): Promise<void> {
    const variation = note.variation;
    const moves = variation ? movesOf(variation, line) : undefined;
    if (moves === undefined || moves.length === 0) {
      return;
    }
    const path = { annotationId: note.annotationId, line };
    const key = pathKey(path);
    let players = this.movers.get(key);
    if (players === undefined) {
      try {
        const steps = await replayLine(this.api, this.gameId, Number(note.revision), path, this.viewer(), this.summary.players, {
          picture: false,
          firstMover,
        });
        players = steps.map((step) => step.player);
      } catch {
        // An orphaned annotation's variation has no position to start from: its moves
        // are listed without names.
        return;
      }
      this.movers.set(key, players);
    }
    const nested: Promise<void>[] = [];
    moves.forEach((move, index) => {
      move.variations.forEach((_, alternative) => {
        nested.push(this.loadMovers(note, [...line, index + 1, alternative + 1], players[index]));
      });
    });
    await Promise.all(nested);
  }

  /** The line `line` of `note`'s variation as a list of buttons, nested lines under their move. */
  private variationList(note: Annotation, line: readonly number[]): HTMLOListElement | null {
    const moves = note.variation ? movesOf(note.variation, line) : undefined;
    if (moves === undefined || moves.length === 0) {
      return null;
    }
    const path = { annotationId: note.annotationId, line };
    const key = pathKey(path);
    const players = this.movers.get(key) ?? [];
    return el(
      "ol",
      { class: "variation", "data-path": key, "aria-label": line.length ? `alternative line ${lineText(line)}` : "variation" },
      ...moves.map((move, index) => {
        const button = el(
          "button",
          { type: "button", class: "variation-move", "data-path": key, "data-move": index + 1 },
          players[index] ? el("span", { class: "player" }, `${players[index]}:`) : null,
          players[index] ? " " : null,
          el("span", { class: "move" }, move.notation),
          move.glyph ? el("b", { class: "glyph" }, ` ${move.glyph}`) : null,
        );
        button.addEventListener("click", () => void this.goInto(path, index + 1));
        return el(
          "li",
          {},
          button,
          move.comment ? el("span", { class: "comment small" }, ` ${move.comment}`) : null,
          ...move.variations.map((_, alternative) => this.variationList(note, [...line, index + 1, alternative + 1])),
        );
      }),
    );
  }

  private showPosition(): void {
    if (this.inside !== undefined) {
      this.showStep(this.inside, this.inside.number);
      this.showRecordAt();
      return;
    }
    const entry = this.entries.get(this.current);
    this.revisionLabel.textContent = `Revision ${this.current} of ${this.head}`;
    this.currentPlayer.textContent = entry?.player ?? "";
    this.currentMove.textContent = entry?.text ?? "";
    const decider = deciderName(entry?.toMove, this.summary.players);
    this.toMove.textContent = entry?.toMove?.who.case === "terminal" ? "Game over" : decider ? `${decider} to move` : "";
    this.showRecordAt();
  }

  /** The recording panel speaks of the revision shown: recording is offered at the head. */
  private showRecordAt(): void {
    const atHead = this.current === this.head && this.inside === undefined;
    this.recordControls.hidden = !atHead;
    this.goHead.hidden = atHead;
    this.recordAt.textContent = atHead
      ? `Recording at the latest revision, ${this.head}.`
      : `Revision ${this.current} is shown; moves are recorded at the latest revision, ${this.head}.`;
    this.updateBoard();
  }

  private toggleZoom(): void {
    const frame = this.boardScroll.querySelector<HTMLElement>(".board-frame");
    const factor = this.boardScroll.classList.contains("zoomed") ? undefined : this.board.zoomToTarget(TARGET_PX);
    const zoomed = this.boardScroll.classList.toggle("zoomed");
    // Zoomed, the board is as large as makes its smallest touchable a finger's 44 CSS px
    // (WCAG 2.5.5; a phone-wide fit leaves Splendor's tokens 10 px), 2.2 times at least.
    frame?.style.setProperty("width", zoomed ? `${Math.round(100 * Math.max(2.2, factor ?? 2.2))}%` : "");
    this.zoom.setAttribute("aria-pressed", String(zoomed));
    this.zoom.textContent = zoomed ? "Fit" : "Zoom";
    // Zooming in goes to where the taps are (the last one, else what may come first).
    const focus = zoomed && this.board.shown ? this.board.focusElement : undefined;
    focus?.scrollIntoView({ block: "nearest", inline: "center" });
    this.board.sayHint();
  }

  /** Tap-to-zoom: zooms the fit board in, keeping the point (x, y) of the screen under the
   * finger as near the middle of the screen as the board allows; a zoomed board stays. */
  private zoomAt(x: number, y: number): void {
    if (this.boardScroll.classList.contains("zoomed")) {
      return;
    }
    const frame = this.boardScroll.querySelector<HTMLElement>(".board-frame");
    const before = frame?.getBoundingClientRect();
    if (frame === null || before === undefined || before.width === 0 || before.height === 0) {
      return;
    }
    const across = (x - before.left) / before.width;
    const down = (y - before.top) / before.height;
    this.toggleZoom();
    const after = frame.getBoundingClientRect();
    this.boardScroll.scrollLeft = across * after.width - this.boardScroll.clientWidth / 2;
    window.scrollBy(0, after.top + down * after.height - window.innerHeight / 2);
  }

  /** The board takes taps while the head is shown and its legal moves are listed. */
  private updateBoard(): void {
    const ready =
      this.mayChange &&
      this.inProgress() &&
      this.inside === undefined &&
      this.current === this.head &&
      this.legalRevision === this.head &&
      this.touchables.length > 0 &&
      this.picture.dataset["revision"] === String(this.head);
    if (!ready) {
      this.board.hide();
      this.boardRevision = -1;
      return;
    }
    if (this.boardRevision === this.head && this.board.shown) {
      return;
    }
    const source = this.picture.getAttribute("src") ?? "";
    const bytes = Uint8Array.from(atob(source.slice(source.indexOf(",") + 1)), (c) => c.charCodeAt(0));
    try {
      this.board.show(new TextDecoder().decode(bytes), this.touchables);
      this.boardRevision = this.head;
    } catch (error) {
      this.board.hide();
      this.pictureError.textContent = `The board cannot be tapped: ${describe(error)}`;
    }
  }

  /** The pictures of this game as the chosen viewer sees them. */
  private picturesFor(choice: ViewerChoice): Pictures {
    const viewer = choice.kind === undefined ? undefined : { kind: choice.kind };
    const { api, gameId } = this;
    const layout = pictureLayout();
    return new Pictures({
      async one(revision) {
        const answer = await api.tablelog.getState({
          gameId,
          revision: BigInt(revision),
          viewer,
          picture: true,
          pictureLayout: layout,
        });
        return answer.state?.picture ?? "";
      },
      async *range(first, last) {
        const stream = api.tablelog.replayGame({
          gameId,
          fromRevision: BigInt(first),
          toRevision: BigInt(last),
          viewer,
          picture: true,
          pictureLayout: layout,
        });
        for await (const item of stream) {
          if (isHistoryStep(item) && item.event !== undefined && item.state !== undefined) {
            yield [Number(item.event.revision), item.state.picture] as const;
          }
        }
      },
    });
  }

  private async showPicture(revision: number): Promise<void> {
    const choice = this.choice;
    try {
      const source = await this.pictures.get(revision);
      if (revision !== this.current || choice !== this.choice || this.inside !== undefined) {
        return;
      }
      if (this.picture.getAttribute("src") !== source) {
        this.picture.src = source;
        await this.picture.decode().catch(() => undefined);
      }
      if (revision !== this.current || choice !== this.choice || this.inside !== undefined) {
        return;
      }
      delete this.picture.dataset["variation"];
      delete this.picture.dataset["variationMove"];
      this.picture.alt = `${this.title.textContent} at revision ${revision}`;
      this.picture.dataset["revision"] = String(revision);
      this.picture.dataset["view"] = choice.key;
      this.pictureError.textContent = "";
      this.updateBoard();
    } catch (error) {
      if (revision === this.current) {
        this.pictureError.textContent = `No picture: ${describe(error)}`;
      }
      return;
    }
    // Only now: the server draws a block's pictures one after another, and the picture
    // asked for must not wait behind them.
    this.pictures.around(revision, this.head);
  }

  private async changeViewer(key: string): Promise<void> {
    const previous = this.choice;
    this.choice = this.choices.find((c) => c.key === key) ?? AS_ENTITLED;
    this.pictures = this.picturesFor(this.choice);
    this.viewerError.textContent = "";
    this.live?.abort();
    const at = this.current;
    const inside = this.inside;
    try {
      await this.loadHistory();
    } catch (error) {
      this.viewerError.textContent = describe(error);
      this.choice = previous;
      this.pictures = this.picturesFor(previous);
      this.viewerSelect.value = previous.key;
      await this.loadHistory();
    }
    this.current = 0;
    this.go(at);
    if (inside !== undefined) {
      await this.goInto(inside.path, inside.number);
    }
    this.followIfLive();
    if (this.inProgress()) {
      void this.loadLegalMoves();
    }
  }

  // --- live -------------------------------------------------------------------------------

  private followIfLive(): void {
    this.live?.abort();
    if (!this.inProgress()) {
      this.liveStatus.textContent = "";
      return;
    }
    const live = new AbortController();
    this.live = live;
    void this.watch(live.signal);
  }

  private async watch(signal: AbortSignal): Promise<void> {
    let delay = RETRY_FIRST_MS;
    while (!signal.aborted && this.inProgress()) {
      try {
        const stream = this.api.tablelog.watchGame(
          { gameId: this.gameId, fromRevision: BigInt(this.head + 1), viewer: this.viewer() },
          { signal },
        );
        this.liveStatus.textContent = "live";
        for await (const message of stream) {
          delay = RETRY_FIRST_MS;
          if (message.item.case === "update") {
            await this.onUpdate(message.item.value);
          } else if (message.item.case === "heartbeat" && Number(message.item.value.headRevision) > this.head) {
            await this.refreshSummary();
            await this.catchUp();
          }
          if (!this.inProgress()) {
            break;
          }
        }
      } catch (error) {
        if (signal.aborted || isCancelled(error)) {
          return;
        }
        this.liveStatus.textContent = `reconnecting (${describe(error)})`;
      }
      if (!this.inProgress()) {
        break;
      }
      await new Promise((resolve) => window.setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
    if (!signal.aborted) {
      this.liveStatus.textContent = "";
    }
  }

  private async onUpdate(item: ReplayGameResponse): Promise<void> {
    const body = item.event?.body.case;
    if (body === "annotationAdded" || body === "annotationRemoved") {
      await this.loadAnnotations();
      return;
    }
    const following = this.current === this.head && this.inside === undefined;
    if (!this.addStep(item)) {
      return;
    }
    await this.refreshSummary();
    if (following) {
      this.go(this.head);
    } else {
      this.showPosition();
    }
    if (this.inProgress()) {
      void this.loadLegalMoves();
    }
  }

  // --- annotations ------------------------------------------------------------------------

  private async loadAnnotations(): Promise<void> {
    const found: Annotation[] = [];
    let pageToken = "";
    do {
      const page = await this.api.tablelog.listAnnotations({ gameId: this.gameId, pageSize: ANNOTATIONS_PAGE, pageToken });
      found.push(...page.annotations);
      pageToken = page.nextPageToken;
    } while (pageToken);
    this.annotations = found;
    await Promise.all(found.filter((note) => note.variation?.moves.length).map((note) => this.loadMovers(note, [], undefined)));
    for (const revision of this.items.keys()) {
      this.showNotes(revision);
    }
  }

  private showNotes(revision: number): void {
    const item = this.items.get(revision);
    if (item === undefined) {
      return;
    }
    const notes = this.annotations.filter((note) => Number(note.revision) === revision);
    const glyphs = item.querySelector(".glyphs");
    if (glyphs !== null) {
      glyphs.textContent = notes.map((note) => note.glyph).filter(Boolean).join(" ");
    }
    const box = item.querySelector(".notes");
    if (box instanceof HTMLElement) {
      replaceChildren(
        box,
        ...notes.map((note) =>
          el(
            "p",
            { class: "note", "data-annotation-id": note.annotationId },
            note.glyph ? el("b", { class: "glyph" }, note.glyph) : null,
            note.glyph && note.comment ? " " : null,
            note.comment ? el("span", { class: "comment" }, note.comment) : null,
            el("span", { class: "muted small" }, ` — ${note.actor?.user ?? ""}${note.orphaned ? " (its move was amended away)" : ""}`),
            this.unverifiedNotes.has(note.annotationId)
              ? el("span", { class: "unverified small", title: this.unverifiedNotes.get(note.annotationId) ?? "" }, " (unverified import)")
              : null,
            note.variation?.moves.length ? el("span", { class: "muted small" }, " — instead:") : null,
            this.variationList(note, []),
          ),
        ),
      );
      if (this.inside !== undefined) {
        this.markVariationMove();
      }
    }
  }

  private async annotate(): Promise<void> {
    const glyph = this.glyphSelect.value;
    const comment = this.commentInput.value.trim();
    const line = typedLine(this.variationInput.value);
    this.annotationError.textContent = "";
    if (!glyph && !comment && line.length === 0) {
      this.annotationError.textContent = "Choose a glyph, write a comment or give an alternative line.";
      return;
    }
    try {
      await this.api.tablelog.addAnnotation({
        gameId: this.gameId,
        revision: BigInt(this.current),
        glyph,
        comment,
        requestId: requestId(),
        variation: line.length ? { moves: line.map((notation) => ({ notation })) } : undefined,
      });
    } catch (error) {
      this.annotationError.textContent = line.length ? describeRefusal(error) : describe(error);
      return;
    }
    this.commentInput.value = "";
    this.variationInput.value = "";
    this.glyphSelect.value = "";
    await this.loadAnnotations();
  }

  // --- recording --------------------------------------------------------------------------

  private async loadLegalMoves(): Promise<void> {
    if (!this.mayChange) {
      return;
    }
    const head = this.head;
    try {
      const answer = await this.api.tablelog.listLegalMoves({
        gameId: this.gameId,
        revision: 0n,
        pageSize: LEGAL_MOVES_SHOWN,
        viewer: this.viewer(),
      });
      if (head !== this.head) {
        return;
      }
      this.legalMoves = answer.moves.map((move) => move.notation);
      this.legalDetails = new Map(answer.moves.filter((move) => move.detail).map((move) => [move.notation, move.detail]));
      this.legalWords = new Map(answer.moves.filter((move) => move.words).map((move) => [move.notation, move.words]));
      this.touchables = answer.moves.map((move) => ({
        notation: move.notation,
        touches: move.touches,
        anyOrder: move.touchesAnyOrder,
        words: move.words,
      }));
      this.legalDecider = deciderName(answer.toMove, this.summary.players);
      this.legalRevision = head;
      this.boardRevision = -1;
      const more = answer.totalSize > answer.moves.length ? ` (the first ${answer.moves.length} of ${answer.totalSize})` : "";
      this.legalNote.textContent = `${deciderName(answer.toMove, this.summary.players)} to move${more}`;
    } catch (error) {
      this.legalMoves = [];
      this.touchables = [];
      this.legalNote.textContent =
        reasonOf(error) === "LEGAL_MOVES_HIDDEN"
          ? "The legal moves would show what is hidden from this view: type the move."
          : describe(error);
    }
    this.showLegalMoves();
    this.updateBoard();
  }

  /** Records a move composed on the board; a refusal is thrown, for the board to show. */
  private async recordTapped(notation: string): Promise<void> {
    this.recordError.textContent = "";
    try {
      const answer = await this.api.tablelog.recordMove({
        gameId: this.gameId,
        input: { case: "notation", value: notation },
        expectedVersion: this.summary.version,
        requestId: requestId(),
      });
      this.recordNote.textContent = `Recorded ${notation} (revision ${answer.game?.version ?? ""})`;
      await this.afterChange(answer.game);
    } catch (error) {
      // The refusal in the server's words, with the rule it names; a stale version is said
      // on the board of the head the page now catches up with (the taps go: they were
      // composed on the board before the move it missed).
      const stale = reasonOf(error) === "STALE_VERSION";
      const words = `${describeRefusal(error)}${stale ? " Someone recorded first: the board now shows their move." : ""}`;
      this.board.refuse(words, stale);
      await this.refused(error);
      throw new Error(words);
    }
  }

  private showLegalMoves(): void {
    const words = this.legalFilter.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const label = (notation: string): string => {
      const detail = this.legalDetails.get(notation);
      return detail ? `${notation} (${detail})` : notation;
    };
    // The filter reads the card and the move's words too: typing `1k0` finds the buy of
    // that card, `white` the takes of white.
    const read = (notation: string): string => `${label(notation)} ${this.legalWords.get(notation) ?? ""}`.toLowerCase();
    const shown = this.legalMoves.filter((notation) => words.every((word) => read(notation).includes(word)));
    replaceChildren(
      this.legalList,
      ...shown.map((notation) =>
        el(
          "li",
          {},
          el("button", { type: "button", class: "legal-move", "data-notation": notation, title: this.legalWords.get(notation) }, label(notation)),
        ),
      ),
    );
  }

  private async record(): Promise<void> {
    const notation = this.notationInput.value.trim();
    this.recordError.textContent = "";
    this.recordNote.textContent = "";
    if (!notation) {
      this.recordError.textContent = "Type a move, or pick one of the legal moves.";
      return;
    }
    this.recordButton.disabled = true;
    try {
      const answer = await this.api.tablelog.recordMove({
        gameId: this.gameId,
        input: { case: "notation", value: notation },
        expectedVersion: this.summary.version,
        requestId: requestId(),
      });
      this.notationInput.value = "";
      this.recordNote.textContent = `Recorded ${answer.events
        .map((e) => (e.body.case === "moveRecorded" ? e.body.value.notation : ""))
        .filter(Boolean)
        .join(", ")} (revision ${answer.game?.version ?? ""})`;
      await this.afterChange(answer.game);
    } catch (error) {
      await this.refused(error);
    } finally {
      this.recordButton.disabled = false;
    }
  }

  private async change(kind: "undo" | "redo"): Promise<void> {
    this.recordError.textContent = "";
    this.recordNote.textContent = "";
    const request = { gameId: this.gameId, expectedVersion: this.summary.version, requestId: requestId() };
    try {
      const answer = kind === "undo" ? await this.api.tablelog.undoMove(request) : await this.api.tablelog.redoMove(request);
      this.recordNote.textContent = kind === "undo" ? "Undone." : "Redone.";
      await this.afterChange(answer.game);
    } catch (error) {
      await this.refused(error);
    }
  }

  /** A refused change said under the recording panel; at a stale version the page catches
   * up with the head the server has (the live updates may have missed it: a phone's bad
   * wifi), shows it if the head was shown, and lists its legal moves again, so that the
   * board and the panel offer the moves of the game as it now is. */
  private async refused(error: unknown): Promise<void> {
    this.recordError.textContent = describe(error);
    if (reasonOf(error) === "STALE_VERSION") {
      this.recordError.textContent += " Someone recorded first: the list now shows their move.";
      const atHead = this.current === this.head && this.inside === undefined;
      await this.refreshSummary();
      await this.catchUp();
      if (atHead) {
        this.go(this.head);
      }
      if (this.inProgress()) {
        await this.loadLegalMoves();
      }
    }
  }

  private async afterChange(game: GameSummary | undefined): Promise<void> {
    if (game !== undefined) {
      this.summary = game;
      this.showSummary();
    }
    await this.catchUp();
    this.go(this.head);
    if (this.inProgress()) {
      void this.loadLegalMoves();
    } else {
      this.live?.abort();
      this.liveStatus.textContent = "";
    }
  }
}

/** Whom a tie-break was applied to: "Ann and Bob tied on 17", the players who share the
 * highest total (every game's tie-break settles a tie on the total, by its own rule, which
 * the server's result names). */
function tiedWords(scores: readonly SeatScore[], players: readonly Player[]): string {
  const best = scores.reduce((most, score) => (score.total > most ? score.total : most), scores[0]?.total ?? 0n);
  const tied = scores.filter((score) => score.total === best).map((score) => players[score.seat]?.name ?? `seat ${score.seat}`);
  return `${tied.join(" and ")} tied on ${best}`;
}

/** "Deleted by Ann on 2026-12-02 07:10 UTC (a test game)". */
function deletionWords(game: GameSummary): string {
  const deletion = game.deletion;
  const seconds = deletion?.time ? Number(deletion.time.seconds) : 0;
  const when = new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
  const reason = deletion?.reason ? ` (${deletion.reason})` : "";
  return `Deleted by ${deletion?.by || "the club's owner"} on ${when} UTC${reason}`;
}
