/**
 * Creating a game from the web app (issue 25): the game type, the players by name (the
 * names of the club's earlier games offered as suggestions), the recording mode, a title
 * and the game's options. The options come from the server (`GameInfo.options`: name,
 * description, default) and each one's input from the generated options message's schema
 * (a flag is a checkbox, an enum a list of its values, a number a number): the client knows
 * no game's rules, only the API's types. An option left at its default is not sent; the
 * server checks everything and its refusal is shown under the form.
 */
import { fromJson, ScalarType, type DescField, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import type { GameInfo } from "@tablelog/client";
import { GameOptionsSchema, Mode } from "@tablelog/client";
import type { GameSummary } from "@tablelog/client";
import { describe, requestId, type Api } from "./api.js";
import { el } from "./dom.js";

/** As the service bounds them (service/limits.py). */
const MAX_NAME = 64;
const MAX_TITLE = 200;
const MAX_SEATS = 6;
/** The longest text an option's input takes (a campaign as JSON is the longest). */
const MAX_OPTION = 4_000;

/** The options message of the game `name` (its field in the GameOptions oneof). */
function optionsMessage(name: string): DescField | undefined {
  return GameOptionsSchema.fields.find((field) => field.name === name.replace(/-/g, "_"));
}

/** One input for the option `field`, chosen by the field's type alone. */
function optionInput(field: DescField, fallback: string): HTMLInputElement | HTMLSelectElement {
  const common = { class: "new-option", "data-option": field.name, "aria-label": field.name.replace(/_/g, " ") };
  if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) {
    const box = el("input", { ...common, type: "checkbox" }) as HTMLInputElement;
    box.checked = fallback === "true";
    box.defaultChecked = box.checked;
    return box;
  }
  if (field.fieldKind === "enum") {
    const select = el("select", common, el("option", { value: "" }, `default (${fallback || "unset"})`)) as HTMLSelectElement;
    for (const value of field.enum.values) {
      if (value.number !== 0) {
        select.append(el("option", { value: value.name }, value.localName.toLowerCase().replace(/_/g, " ")));
      }
    }
    return select;
  }
  const numeric = field.fieldKind === "scalar" && field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES;
  const hint = field.fieldKind === "list" ? "comma-separated" : field.fieldKind === "message" ? "JSON" : "";
  return el("input", {
    ...common,
    type: numeric ? "number" : "text",
    ...(numeric ? { min: "0", step: "1" } : {}),
    maxlength: MAX_OPTION,
    placeholder: [fallback && `default: ${fallback}`, hint].filter(Boolean).join("; ") || "default",
  }) as HTMLInputElement;
}

/** The options set in the form as the game's GameOptions JSON, or undefined when all are at
 * their defaults; a value of the wrong type throws (said under the form). */
function optionsJson(game: DescField, inputs: readonly (HTMLInputElement | HTMLSelectElement)[]): JsonObject | undefined {
  const message = game.message as DescMessage;
  const values: JsonObject = {};
  for (const input of inputs) {
    const field = message.fields.find((f) => f.name === input.dataset.option);
    if (field === undefined) {
      continue;
    }
    if (input instanceof HTMLInputElement && input.type === "checkbox") {
      if (input.checked !== input.defaultChecked) {
        values[field.jsonName] = input.checked;
      }
      continue;
    }
    const text = input.value.trim();
    if (text === "") {
      continue;
    }
    if (field.fieldKind === "list") {
      values[field.jsonName] = text.split(",").map((item) => {
        const one = item.trim();
        return field.listKind === "scalar" && field.scalar !== ScalarType.STRING ? Number(one) : one;
      });
    } else if (field.fieldKind === "message") {
      values[field.jsonName] = JSON.parse(text) as JsonObject;
    } else if (field.fieldKind === "scalar" && field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES) {
      values[field.jsonName] = Number(text);
    } else {
      values[field.jsonName] = text;
    }
  }
  return Object.keys(values).length ? { [game.jsonName]: values } : undefined;
}

export function createForm(api: Api, types: readonly GameInfo[], earlier: readonly GameSummary[]): HTMLElement {
  const names = [...new Set(earlier.flatMap((game) => game.players.map((p) => p.name)))].sort();
  const known = el("datalist", { id: "known-players" }, ...names.map((name) => el("option", { value: name })));
  const gameSelect = el("select", { id: "new-game", "aria-label": "game to create" });
  for (const info of types) {
    gameSelect.append(el("option", { value: info.name }, `${info.title} (${info.minPlayers}-${info.maxPlayers})`));
  }
  const modeSelect = el(
    "select",
    { id: "new-mode", "aria-label": "recording mode" },
    el("option", { value: "table" }, "table: the recorder types what the table reveals"),
    el("option", { value: "dealt" }, "dealt: the server deals what is hidden"),
  );
  const title = el("input", { id: "new-title", type: "text", maxlength: MAX_TITLE, placeholder: "title (optional)", "aria-label": "title" });
  const seats = el("div", { id: "new-players", class: "row" });
  const options = el("fieldset", { id: "new-options" });
  for (let seat = 0; seat < MAX_SEATS; seat++) {
    seats.append(
      el("input", {
        type: "text",
        class: "new-player",
        list: "known-players",
        maxlength: MAX_NAME,
        placeholder: `player ${seat + 1}`,
        "aria-label": `player ${seat + 1}`,
      }),
    );
  }
  const error = el("p", { id: "new-error", class: "error", role: "alert" });
  const form = el(
    "form",
    { id: "create-game", class: "panel" },
    el("h2", {}, "New game"),
    el("div", { class: "row" }, gameSelect, modeSelect, title),
    seats,
    options,
    known,
    el("button", { type: "submit", id: "new-submit" }, "Create"),
    error,
  );
  const showSeats = () => {
    const info = types.find((t) => t.name === gameSelect.value);
    const inputs = Array.from(seats.querySelectorAll<HTMLInputElement>("input"));
    inputs.forEach((input, seat) => {
      input.hidden = info !== undefined && seat >= info.maxPlayers;
    });
    const dealt = info?.modes.includes(Mode.DEALT) ?? false;
    modeSelect.querySelector<HTMLOptionElement>('option[value="dealt"]')!.disabled = !dealt;
    if (!dealt) {
      modeSelect.value = "table";
    }
    const game = optionsMessage(gameSelect.value);
    options.replaceChildren(el("legend", {}, "Options"));
    options.hidden = game?.message === undefined || !info?.options.length;
    for (const option of info?.options ?? []) {
      const field = game?.message?.fields.find((f) => f.name === option.name);
      if (field === undefined) {
        continue;
      }
      const input = optionInput(field, option.defaultValue);
      options.append(
        el("label", { class: "option" }, input, " ", el("span", {}, `${option.name.replace(/_/g, " ")}: ${option.description}`)),
      );
    }
  };
  gameSelect.addEventListener("change", showSeats);
  showSeats();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    error.textContent = "";
    const players = Array.from(seats.querySelectorAll<HTMLInputElement>("input"))
      .filter((input) => !input.hidden)
      .map((input) => input.value.trim())
      .filter(Boolean);
    void (async () => {
      try {
        const game = optionsMessage(gameSelect.value);
        const inputs = Array.from(options.querySelectorAll<HTMLInputElement | HTMLSelectElement>(".new-option"));
        const json = game === undefined ? undefined : optionsJson(game, inputs);
        const answer = await api.tablelog.createGame({
          game: gameSelect.value,
          ...(json === undefined ? {} : { options: fromJson(GameOptionsSchema, json) }),
          players: players.map((name) => ({ name })),
          mode: modeSelect.value === "dealt" ? Mode.DEALT : Mode.TABLE,
          title: title.value.trim(),
          requestId: requestId(),
        });
        window.location.assign(`/games/${encodeURIComponent(answer.game?.gameId ?? "")}`);
      } catch (failure) {
        error.textContent = describe(failure);
      }
    })();
  });
  return form;
}

/** As the service bounds a record's text (service/limits.py MAX_RECORD_TEXT). */
const MAX_RECORD_TEXT = 8 << 20;

/**
 * Importing a text record (docs/record-format.md) from the web app, pasted or from a file:
 * the server reads and checks every move, and a dealt game's record becomes a table game
 * (issue 26). One game imported opens it; several are listed.
 */
export function importForm(api: Api): HTMLElement {
  const text = el("textarea", {
    id: "import-text",
    rows: 6,
    placeholder: '[Game "splendor"] ... — paste a text record, or choose a file',
    "aria-label": "text record",
  });
  const file = el("input", { id: "import-file", type: "file", accept: ".txt,.pgn,text/plain", "aria-label": "record file" });
  const error = el("p", { id: "import-error", class: "error", role: "alert" });
  const done = el("p", { id: "import-done", role: "status" });
  const form = el(
    "form",
    { id: "import-record", class: "panel" },
    el("h2", {}, "Import a text record"),
    text,
    el("div", { class: "row" }, file, el("button", { type: "submit", id: "import-submit" }, "Import")),
    error,
    done,
  );
  let source = "web";
  file.addEventListener("change", () => {
    const chosen = file.files?.[0];
    if (chosen !== undefined) {
      source = chosen.name.slice(0, 200);
      void chosen.text().then((read) => {
        text.value = read;
      });
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    error.textContent = "";
    done.textContent = "";
    if (text.value.length > MAX_RECORD_TEXT) {
      error.textContent = `A record is at most ${MAX_RECORD_TEXT} characters.`;
      return;
    }
    void (async () => {
      try {
        const answer = await api.tablelog.importRecord({ text: text.value, requestId: requestId(), source });
        if (answer.games.length === 1) {
          window.location.assign(`/games/${encodeURIComponent(answer.games[0]?.gameId ?? "")}`);
          return;
        }
        done.textContent = `Imported ${answer.games.length} games.`;
      } catch (failure) {
        error.textContent = describe(failure);
      }
    })();
  });
  return form;
}
