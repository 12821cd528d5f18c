/**
 * The web app's entry: takes the token (from `#token=...` once, else this tab's storage,
 * else the login box), then shows the page the address names: `/` the game list,
 * `/games/<id>` a game, `/standings` a league table, `/players/<name>` a player's record.
 */
import { Role, type WhoAmIResponse } from "@tablelog/client";
import { connect, describe, isUnauthenticated, type Api } from "./api.js";
import { byId, el, replaceChildren } from "./dom.js";
import { showGame } from "./game.js";
import { showList } from "./list.js";
import { showPlayer, showStandings } from "./standings.js";
import { adoptTokenFromAddress, checkToken, currentToken, forgetToken, saveToken } from "./session.js";

const GAME_PATH = /^\/games\/([A-Za-z0-9_-]{1,64})\/?$/;
const PLAYER_PATH = /^\/players\/([^/]{1,200})\/?$/;

const ROLE_WORDS: Record<number, string> = {
  [Role.OWNER]: "owner",
  [Role.RECORDER]: "recorder",
  [Role.PLAYER]: "player",
  [Role.SPECTATOR]: "spectator",
};

async function main(): Promise<void> {
  adoptTokenFromAddress();
  const root = byId("app");
  const token = currentToken();
  if (token === undefined) {
    showLogin(root, "");
    return;
  }
  const api = connect(token);
  let me: WhoAmIResponse | undefined;
  try {
    me = await api.clubs.whoAmI({});
  } catch (error) {
    if (isUnauthenticated(error)) {
      forgetToken();
      showLogin(root, describe(error));
      return;
    }
    // The page can still be read; the viewer choice then offers only what everyone gets.
    me = undefined;
  }
  showWho(me);
  await route(api, root, me);
}

async function route(api: Api, root: HTMLElement, me: WhoAmIResponse | undefined): Promise<void> {
  const path = window.location.pathname;
  if (me?.gameId && !GAME_PATH.test(path)) {
    // A link token reads one game: its page is the app's start.
    window.location.replace(`/games/${encodeURIComponent(me.gameId)}`);
    return;
  }
  const game = GAME_PATH.exec(path);
  try {
    if (game?.[1] !== undefined) {
      await showGame(api, root, game[1], me);
    } else if (path === "/" || path === "/index.html") {
      await showList(api, root);
    } else if (path === "/standings" || path === "/standings/") {
      await showStandings(api, root);
    } else if (PLAYER_PATH.test(path)) {
      await showPlayer(api, root, decodeURIComponent(PLAYER_PATH.exec(path)?.[1] ?? ""));
    } else {
      replaceChildren(root, el("h1", {}, "Not found"), el("p", {}, el("a", { href: "/" }, "The games")));
    }
  } catch (error) {
    if (isUnauthenticated(error)) {
      forgetToken();
      showLogin(root, describe(error));
      return;
    }
    replaceChildren(root, el("p", { class: "error", role: "alert", id: "page-error" }, describe(error)), el("p", {}, el("a", { href: "/" }, "The games")));
  }
}

function showWho(me: WhoAmIResponse | undefined): void {
  const who = byId("who");
  const signOut = el("button", { type: "button", id: "sign-out", class: "link" }, "sign out");
  signOut.addEventListener("click", () => {
    forgetToken();
    window.location.assign("/");
  });
  const name = me?.member ? `${me.member.displayName} (${ROLE_WORDS[me.member.role] ?? "member"})` : "";
  replaceChildren(who, name, " ", signOut);
}

function showLogin(root: HTMLElement, problem: string): void {
  const input = el("input", {
    id: "token",
    type: "password",
    autocomplete: "current-password",
    "aria-label": "token",
    placeholder: "tlm_…",
  });
  const error = el("p", { class: "error", id: "login-error", role: "alert" }, problem);
  const form = el(
    "form",
    { id: "login", class: "panel" },
    el("h1", {}, "Sign in"),
    el(
      "p",
      {},
      "Paste the token the club's owner gave you. On the machine running the server, " +
        "open the address `tablelog serve` printed: it signs you in as the owner.",
    ),
    input,
    el("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const checked = checkToken(input.value);
    if ("problem" in checked) {
      error.textContent = checked.problem;
      return;
    }
    void connect(checked.token)
      .clubs.whoAmI({})
      .then(() => {
        saveToken(checked.token);
        window.location.reload();
      })
      .catch((refusal: unknown) => {
        error.textContent = describe(refusal);
      });
  });
  replaceChildren(root, form);
  input.focus();
}

void main();
