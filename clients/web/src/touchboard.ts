/**
 * The picture as the keyboard (issue 25): the head's picture drawn over the shown image as
 * live SVG whose `data-touch` elements are tapped (or focused and chosen with Enter or
 * Space) to compose a move; the elements that can come next are highlighted, the others
 * dimmed, and a bar at the bottom (within thumb reach) says what the taps name so far, says
 * the move in words once one is left (the server's `LegalMove.words`, beside each of the few
 * moves left too), takes a tap back, and records the move with one more tap.
 *
 * The highlight is drawn on a layer of its own over the picture (`touch-marks`: a veil with
 * a hole for each element that may come next, the taps outlined), never by restyling the
 * picture's elements, so that what a tap repaints is three paths however many touchables it
 * changes (Castello's hundred-odd edges at a first tap). Measured in
 * benchmarks/touch_latency.py (--compare), it is no slower than restyling, and no
 * measurably faster in headless Chromium, where a tap's time is the browser's fixed cost of
 * a frame (docs/benchmarks.md). Each touchable's outline, in the picture's units, is worked
 * out once a revision.
 *
 * The SVG text is our server's, but it is still treated as text from the network: it is
 * parsed as XML and copied element by element through a list of the tags and attributes a
 * picture uses (no script, no link, no style, no event attribute can come through), never
 * inserted as markup.
 */
import { el, replaceChildren } from "./dom.js";
import { MAX_PICTURE_CHARS } from "./picture.js";
import { complete, narrow, nextTaps, type Touchable } from "./touch.js";

const SVG_NS = "http://www.w3.org/2000/svg";
/** The mask of the veil: one board is shown at a time, so one id. */
const VEIL_MASK = "touch-veil-mask";
const TAGS = new Set(["svg", "g", "rect", "circle", "ellipse", "polygon", "polyline", "line", "path", "text", "tspan", "title"]);
const ATTRIBUTES = new Set([
  "viewBox", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
  "points", "d", "fill", "stroke", "stroke-width", "stroke-opacity", "fill-opacity",
  "stroke-linecap", "opacity", "transform", "font-size", "font-family", "font-weight",
  "text-anchor", "class", "data-touch",
]);
/** Candidate moves listed as buttons in the bar when the taps leave this few. */
const CHOICES_SHOWN = 8;

/** The picture's text as a detached, sanitised SVG element. */
export function importPicture(svg: string): SVGSVGElement {
  if (svg.length > MAX_PICTURE_CHARS) {
    throw new Error(`the picture is over ${MAX_PICTURE_CHARS} characters`);
  }
  const parsed = new DOMParser().parseFromString(svg, "image/svg+xml");
  const root = parsed.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== "svg") {
    throw new Error("the picture is not an SVG document");
  }
  return copy(root) as SVGSVGElement;
}

function copy(node: Element): Element | null {
  if (node.namespaceURI !== SVG_NS || !TAGS.has(node.localName)) {
    return null;
  }
  const out = document.createElementNS(SVG_NS, node.localName);
  for (const attribute of Array.from(node.attributes)) {
    if (attribute.namespaceURI === null && ATTRIBUTES.has(attribute.name)) {
      out.setAttribute(attribute.name, attribute.value);
    }
  }
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      out.appendChild(document.createTextNode(child.textContent ?? ""));
    } else if (child instanceof Element) {
      const copied = copy(child);
      if (copied !== null) {
        out.appendChild(copied);
      }
    }
  }
  return out;
}

/** The words an element is known by: its own `<title>`, else its id. */
function nameOf(element: Element): string {
  for (const child of Array.from(element.children)) {
    if (child.localName === "title") {
      return child.textContent ?? "";
    }
  }
  return element.getAttribute("data-touch") ?? "";
}

export interface TouchHost {
  /** Record the move named by `notation` (the server checks it). */
  record(notation: string): Promise<void>;
  /** Who decides the moves listed, in words ("Ann", "the table"). */
  decider(): string;
  /** A tap on the board where nothing can be tapped (tap-to-zoom on that region). */
  zoomAt(x: number, y: number): void;
  /** Whether the board is zoomed in (the Zoom button). */
  zoomed(): boolean;
}

/** WCAG 2.5.5's touch target, in CSS px: a smaller touchable acts only on a zoomed board. */
export const FINGER_PX = 44;

/** The tappable picture and its bar, for the head of one game. */
export class TouchBoard {
  /** Laid over the shown picture, the same size. */
  readonly overlay = el("div", { id: "touch-board", class: "touch-board", hidden: true });
  readonly bar = el("section", { id: "tap-bar", class: "tap-bar", "aria-label": "record by tapping the board", hidden: true });
  private readonly words = el("p", { id: "tap-words", "aria-live": "polite" });
  private readonly choices = el("div", { id: "tap-choices", class: "tap-choices" });
  private readonly error = el("p", { id: "tap-error", class: "error", role: "alert" });
  private readonly back = el("button", { type: "button", id: "tap-back" }, "Take back");
  private readonly clear = el("button", { type: "button", id: "tap-clear" }, "Clear");
  private readonly recordButton = el("button", { type: "button", id: "tap-record", class: "primary" }, "Record");
  /** Said beside the Zoom button while the fit board has touchables under a finger's size. */
  readonly hint = el("p", { id: "zoom-hint", class: "muted small", hidden: true });
  private svg: SVGSVGElement | undefined;
  private touchables = new Map<string, Element>();
  /** Each touchable's own classes, and the state last written ("next", "tapped", "dim"). */
  private readonly classes = new Map<string, string>();
  private readonly states = new Map<string, string>();
  /** Each touchable's outline as path data in the picture's units (undefined: not yet
   * worked out for this revision), and whether it is a Castello edge's invisible wedge. */
  private outlines: Map<string, string> | undefined;
  private readonly wedges = new Set<string>();
  private readonly marks = document.createElementNS(SVG_NS, "svg");
  private readonly holes = document.createElementNS(SVG_NS, "path");
  private readonly veil = document.createElementNS(SVG_NS, "rect");
  private readonly maskArea = document.createElementNS(SVG_NS, "rect");
  private readonly nextWedges = document.createElementNS(SVG_NS, "path");
  private readonly tapped = document.createElementNS(SVG_NS, "path");
  private moves: Touchable[] = [];
  private taps: string[] = [];
  /** The ids that may be tapped next (worked out once a tap, by `refresh`). */
  private next = new Set<string>();
  private busy = false;
  /** A server's refusal still to be said when the board is next shown: the refusal that
   * made the page catch up with a move it missed is about the board that comes next. */
  private carried = "";
  /** Where the last finger (or pen, or mouse button) went down on the board. */
  private down: { x: number; y: number; at: number } | undefined;

  constructor(private readonly host: TouchHost) {
    this.overlay.addEventListener("pointerdown", (event) => {
      this.down = { x: event.clientX, y: event.clientY, at: event.timeStamp };
    });
    this.overlay.addEventListener("click", (event) => this.onClick(event));
    this.overlay.addEventListener("keydown", (event) => this.onKey(event));
    this.back.addEventListener("click", () => this.takeBack());
    this.clear.addEventListener("click", () => this.reset());
    this.recordButton.addEventListener("click", () => void this.recordSelected());
    this.choices.addEventListener("click", (event) => {
      const target = event.target instanceof Element ? event.target.closest("button[data-notation]") : null;
      if (target instanceof HTMLButtonElement) {
        void this.recordNotation(target.dataset["notation"] ?? "");
      }
    });
    this.marks.setAttribute("class", "touch-marks");
    this.marks.setAttribute("aria-hidden", "true");
    const mask = document.createElementNS(SVG_NS, "mask");
    mask.setAttribute("id", VEIL_MASK);
    mask.setAttribute("maskUnits", "userSpaceOnUse");
    this.maskArea.setAttribute("fill", "#fff");
    this.holes.setAttribute("fill", "#000");
    mask.append(this.maskArea, this.holes);
    this.veil.setAttribute("class", "touch-veil");
    this.veil.setAttribute("mask", `url(#${VEIL_MASK})`);
    this.nextWedges.setAttribute("class", "touch-next-wedges");
    this.tapped.setAttribute("class", "touch-tapped-marks");
    this.marks.append(mask, this.veil, this.nextWedges, this.tapped);
    replaceChildren(
      this.bar,
      this.words,
      this.choices,
      this.error,
      el("div", { class: "tap-buttons" }, this.back, this.clear, this.recordButton),
    );
  }

  /** Shows `svg` (the head's picture) as the board, with `moves` to compose. */
  show(svg: string, moves: Touchable[]): void {
    const picture = importPicture(svg);
    picture.classList.add("touch-picture");
    picture.removeAttribute("width");
    picture.removeAttribute("height");
    this.svg = picture;
    this.touchables.clear();
    this.classes.clear();
    this.states.clear();
    this.wedges.clear();
    this.outlines = undefined;
    for (const element of Array.from(picture.querySelectorAll("[data-touch]"))) {
      const id = element.getAttribute("data-touch") ?? "";
      this.touchables.set(id, element);
      this.classes.set(id, element.getAttribute("class") ?? "");
      if (element.classList.contains("edge-target")) {
        this.wedges.add(id);
      }
      element.setAttribute("role", "button");
      // Named by its own <title> (SVG's name for an element: "slot 1.3: level 1 card ...");
      // the numbers drawn on it are not its label.
    }
    const box = picture.viewBox.baseVal;
    this.marks.setAttribute("viewBox", `${box.x} ${box.y} ${box.width} ${box.height}`);
    this.marks.setAttribute("preserveAspectRatio", picture.getAttribute("preserveAspectRatio") ?? "xMidYMid meet");
    for (const area of [this.maskArea, this.veil]) {
      area.setAttribute("x", String(box.x));
      area.setAttribute("y", String(box.y));
      area.setAttribute("width", String(box.width));
      area.setAttribute("height", String(box.height));
    }
    replaceChildren(this.overlay, picture, this.marks);
    this.moves = moves.filter((move) => move.touches.length > 0);
    this.taps = [];
    this.error.textContent = this.carried;
    this.carried = "";
    this.overlay.hidden = false;
    this.bar.hidden = false;
    document.body.classList.add("has-tap-bar");
    this.refresh();
    this.sayHint();
  }

  /** The rule for small touchables, said where the Zoom button is while it applies. */
  sayHint(): void {
    const small = !this.host.zoomed() && [...this.touchables.values()].some((element) => this.underFinger(element));
    this.hint.hidden = !small;
    this.hint.textContent = small
      ? `Parts of this board are smaller than a finger (${FINGER_PX} px): a tap on one zooms the board in there, and acts once zoomed.`
      : "";
  }

  /** Whether `element` is drawn under a finger's size (pinch-zoom counted) on the fit board:
   * then a finger's tap on it cannot be told from a tap on its neighbours, and zooms
   * instead of acting (docs/web.md, "Recording by touch"). */
  private underFinger(element: Element): boolean {
    const box = element.getBoundingClientRect();
    const scale = window.visualViewport?.scale ?? 1;
    return box.width > 0 && box.height > 0 && Math.min(box.width, box.height) * scale < FINGER_PX - 0.5;
  }

  hide(): void {
    this.overlay.hidden = true;
    this.hint.hidden = true;
    this.bar.hidden = true;
    document.body.classList.remove("has-tap-bar");
    this.taps = [];
  }

  get shown(): boolean {
    return !this.overlay.hidden;
  }

  /** Taps `id`; false (and an inline refusal, nothing changed) when no move goes on so. */
  tap(id: string): boolean {
    if (!this.next.has(id)) {
      const element = this.touchables.get(id);
      const words = element ? nameOf(element) : id;
      this.error.textContent = this.taps.length
        ? `No legal move goes on with ${words} after ${this.tappedWords()}.`
        : `No legal move starts with ${words}.`;
      return false;
    }
    this.taps.push(id);
    this.error.textContent = "";
    this.carried = "";
    this.refresh();
    return true;
  }

  takeBack(): void {
    this.taps.pop();
    this.error.textContent = "";
    this.carried = "";
    this.refresh();
  }

  reset(): void {
    this.taps = [];
    this.error.textContent = "";
    this.carried = "";
    this.refresh();
  }

  private tappedWords(): string {
    return this.taps.map((id) => {
      const element = this.touchables.get(id);
      return element ? nameOf(element) : id;
    }).join(", then ");
  }

  /** The first touchable, from the element tapped outwards, that a move can go on with:
   * a card in a reserve is inside the reserve, and either may be what comes next. */
  private touched(target: EventTarget | null): string | undefined {
    let element = target instanceof Element ? target.closest("[data-touch]") : null;
    let first: string | undefined;
    while (element !== null && this.overlay.contains(element)) {
      const id = element.getAttribute("data-touch") ?? "";
      first ??= id;
      if (this.next.has(id)) {
        return id;
      }
      element = element.parentElement?.closest("[data-touch]") ?? null;
    }
    return first;
  }

  private onClick(event: Event): void {
    // The element under the finger, not the click's target: on a touch screen the browser
    // moves a tap's click onto the "best" clickable node near the finger (Chromium's touch
    // adjustment), which on a board of small neighbours (the two sides of a Castello edge,
    // 9 px each on a phone) is often the neighbour. A click that no pointer went down for
    // just before (Enter on a focused element, a script's click) keeps its own target.
    let target = event.target;
    const down = this.down;
    if (event instanceof MouseEvent && event.detail > 0 && down !== undefined && event.timeStamp - down.at < 2_000) {
      target = document.elementFromPoint(down.x, down.y) ?? target;
    }
    this.down = undefined;
    if (target instanceof SVGSVGElement && event instanceof MouseEvent && event.detail > 0 && down !== undefined) {
      // The board's background, between its touchables: zoom that region in (a phone's
      // fit board has touchables of 6 to 40 px; zoomed they are 44 px at least).
      this.host.zoomAt(down.x, down.y);
      return;
    }
    const id = this.touched(target);
    const element = id === undefined ? undefined : this.touchables.get(id);
    if (
      element !== undefined &&
      event instanceof MouseEvent &&
      event.detail > 0 &&
      down !== undefined &&
      !this.host.zoomed() &&
      this.underFinger(element)
    ) {
      // A finger's tap on a touchable under 44 px on the fit board (Castello's edges: two
      // triangles 9 px wide) may have meant its neighbour: it zooms there, and nothing is
      // tapped; zoomed, every touchable is 44 px and acts. Keys and scripts act at once.
      event.preventDefault();
      this.host.zoomAt(down.x, down.y);
      this.sayHint();
      return;
    }
    if (id !== undefined && !this.busy) {
      event.preventDefault();
      this.tap(id);
    }
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key !== "Enter" && event.key !== " ") {
      return;
    }
    const id = this.touched(event.target);
    if (id !== undefined && !this.busy) {
      event.preventDefault();
      this.tap(id);
      const focused = this.touchables.get(id);
      if (focused instanceof SVGElement || focused instanceof HTMLElement) {
        focused.focus();
      }
    }
  }

  /** Highlights what may come next, dims the rest, and says in the bar where the taps are. */
  private refresh(): void {
    const candidates = narrow(this.moves, this.taps);
    const next = nextTaps(candidates, this.taps);
    this.next = next;
    // The elements' own state (their class, for the keyboard and assistive technology) is
    // written only where it changed, and no style is attached to it: what is seen is the
    // layer of marks.
    for (const [id, element] of this.touchables) {
      const state = next.has(id) ? "next" : this.taps.includes(id) ? "tapped" : "dim";
      if (this.states.get(id) === state) {
        continue;
      }
      this.states.set(id, state);
      element.setAttribute("class", `${this.classes.get(id) ?? ""} touch-${state}`.trim());
      element.setAttribute("tabindex", state === "next" ? "0" : "-1");
      element.setAttribute("aria-disabled", state === "next" ? "false" : "true");
    }
    this.drawMarks();
    const done = complete(candidates, this.taps);
    const who = this.host.decider();
    const single = done.length === 1 ? done[0] : undefined;
    if (this.taps.length === 0) {
      this.words.textContent = this.moves.length
        ? `${who} to move: tap the board (${this.moves.length} legal moves).`
        : "No move can be tapped here.";
    } else if (single !== undefined) {
      // The move the taps name, in the words the server says it in, to be confirmed by the
      // record button's tap.
      const said = single.words || `${who}: ${single.notation}`;
      const more = candidates.length - 1;
      this.words.textContent = more > 0 ? `${said} (or tap on: ${more} more go on)` : said;
    } else {
      this.words.textContent = `${this.tappedWords()} — ${candidates.length} moves go on so.`;
    }
    this.recordButton.disabled = single === undefined;
    this.recordButton.textContent = single === undefined ? "Record" : `Record: ${single.notation}`;
    this.recordButton.dataset["notation"] = single?.notation ?? "";
    this.back.disabled = this.taps.length === 0;
    this.clear.disabled = this.taps.length === 0;
    const few = this.taps.length > 0 && candidates.length > 1 && candidates.length <= CHOICES_SHOWN;
    if (few || this.choices.firstChild !== null) {
      replaceChildren(
        this.choices,
        ...(few
          ? candidates.map((move) =>
              el(
                "button",
                { type: "button", class: "tap-choice", "data-notation": move.notation },
                ...(move.words ? [el("span", { class: "tap-choice-words" }, move.words), " "] : []),
                el("code", {}, move.notation),
              ),
            )
          : []),
      );
    }
  }

  /** The layer of marks for the taps so far: the veil with a hole for each element that may
   * come next, the next edges' wedges tinted (they are drawn invisible), the taps outlined. */
  private drawMarks(): void {
    const outlines = this.outlineMap();
    const holes: string[] = [];
    const wedges: string[] = [];
    for (const id of this.next) {
      const outline = outlines.get(id);
      if (outline !== undefined) {
        holes.push(outline);
        if (this.wedges.has(id)) {
          wedges.push(outline);
        }
      }
    }
    this.holes.setAttribute("d", holes.join(""));
    this.nextWedges.setAttribute("d", wedges.join(""));
    this.tapped.setAttribute("d", this.taps.map((id) => outlines.get(id) ?? "").join(""));
    // Nothing to dim before a first tap that every element may take, or with no move left.
    this.veil.setAttribute("visibility", this.next.size > 0 ? "visible" : "hidden");
  }

  /** Each touchable's outline in the picture's units: a polygon's own corners (a Castello
   * edge's wedge), else the corners of its bounding box; worked out once a revision, when
   * the board is first drawn (the boxes need the picture laid out). */
  private outlineMap(): Map<string, string> {
    if (this.outlines !== undefined) {
      return this.outlines;
    }
    const outlines = new Map<string, string>();
    const root = this.svg?.getScreenCTM()?.inverse();
    for (const [id, element] of this.touchables) {
      if (!(element instanceof SVGGraphicsElement) || root === undefined) {
        continue;
      }
      const screen = element.getScreenCTM();
      if (screen === null) {
        continue;
      }
      const toRoot = root.multiply(screen);
      let corners: DOMPoint[];
      if (element instanceof SVGPolygonElement && element.points.length > 2) {
        corners = Array.from({ length: element.points.length }, (_, i) => {
          const point = element.points.getItem(i);
          return new DOMPoint(point.x, point.y);
        });
      } else {
        const box = element.getBBox();
        corners = [
          new DOMPoint(box.x, box.y),
          new DOMPoint(box.x + box.width, box.y),
          new DOMPoint(box.x + box.width, box.y + box.height),
          new DOMPoint(box.x, box.y + box.height),
        ];
      }
      const points = corners.map((corner) => corner.matrixTransform(toRoot));
      outlines.set(id, `M${points.map((p) => `${round(p.x)} ${round(p.y)}`).join("L")}Z`);
    }
    // Drawn before the picture was laid out (hidden): worked out again at the next tap.
    if (outlines.size > 0 || this.touchables.size === 0) {
      this.outlines = outlines;
    }
    return outlines;
  }

  private async recordSelected(): Promise<void> {
    const notation = this.recordButton.dataset["notation"] ?? "";
    if (notation) {
      await this.recordNotation(notation);
    }
  }

  private async recordNotation(notation: string): Promise<void> {
    if (this.busy || !notation) {
      return;
    }
    this.busy = true;
    this.recordButton.disabled = true;
    try {
      await this.host.record(notation);
    } catch (error) {
      this.error.textContent = error instanceof Error ? error.message : String(error);
    } finally {
      this.busy = false;
      this.refresh();
    }
  }

  /** Shows a refusal from the server in the bar, the taps kept; `carry`: say it again on the
   * next board shown (the page is about to catch up with the head the server has, whose
   * board replaces this one and its taps). */
  refuse(words: string, carry = false): void {
    this.error.textContent = words;
    this.carried = carry ? words : "";
  }

  /** Where a zoom should centre: the last tap, else the first element that may come next. */
  get focusElement(): Element | undefined {
    const last = this.taps[this.taps.length - 1];
    if (last !== undefined) {
      return this.touchables.get(last);
    }
    return [...this.touchables.entries()].find(([id]) => this.next.has(id))?.[1];
  }

  /** The zoom (a factor of the present size) that makes every touchable at least `px` CSS
   * px in both directions, capped at 8 (a board eight phones wide); undefined when no
   * touchable is drawn. */
  zoomToTarget(px: number): number | undefined {
    let smallest = Infinity;
    for (const element of this.touchables.values()) {
      const box = element.getBoundingClientRect();
      if (box.width > 0 && box.height > 0) {
        smallest = Math.min(smallest, box.width, box.height);
      }
    }
    return smallest === Infinity ? undefined : Math.min(8, (px / smallest) * 1.02);
  }

  get svgElement(): SVGSVGElement | undefined {
    return this.svg;
  }
}

/** A coordinate to a tenth of the picture's unit (a path's text kept short). */
function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}
