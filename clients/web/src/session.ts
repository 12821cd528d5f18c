/**
 * The caller's bearer token. A link such as `http://127.0.0.1:8080/#token=...` (what
 * `tablelog serve` prints for the local owner, or a shared link) hands it over once: it is
 * kept in sessionStorage (this tab only, gone when the tab closes) and taken out of the
 * address bar at once, so that it is neither bookmarked nor shown on screen. Otherwise the
 * login box asks for it.
 */

const STORAGE_KEY = "tablelog.token";
/** Longer than any token a tablelog server issues; anything longer is a mistake. */
export const MAX_TOKEN_LENGTH = 8192;
/** RFC 6750's b64token: what may follow "Bearer " in an authorization header. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The token trimmed, or a sentence saying why it cannot be one. */
export function checkToken(text: string): { token: string } | { problem: string } {
  const token = text.trim();
  if (token === "") {
    return { problem: "Paste the token you were given." };
  }
  if (token.length > MAX_TOKEN_LENGTH) {
    return { problem: `A token has at most ${MAX_TOKEN_LENGTH} characters.` };
  }
  if (!BEARER_TOKEN.test(token)) {
    return { problem: "A token has only letters, digits and - . _ ~ + / (then = padding)." };
  }
  return { token };
}

/** Moves a `#token=...` of the address into this tab's storage and out of the address. */
export function adoptTokenFromAddress(): void {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  const given = fragment.get("token");
  if (given === null) {
    return;
  }
  const checked = checkToken(given);
  if ("token" in checked) {
    saveToken(checked.token);
  }
  fragment.delete("token");
  const rest = fragment.toString();
  const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : "");
  window.history.replaceState(window.history.state, "", url);
}

export function currentToken(): string | undefined {
  return window.sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function saveToken(token: string): void {
  window.sessionStorage.setItem(STORAGE_KEY, token);
}

export function forgetToken(): void {
  window.sessionStorage.removeItem(STORAGE_KEY);
}
