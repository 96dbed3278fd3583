// The site header's account link on every page: "Sign in", or the username
// once signed in, always leading to the account page.

import { accountLinkText } from "./account-text.js";

/** Shows who is signed in on the header's `#account-link` (a page without one is left alone). */
export function showAccountLink(who, doc = document) {
  const link = doc.querySelector("#account-link");
  if (!link) return;
  link.textContent = accountLinkText(who);
  link.title = who?.kind === "account" ? "Your account and rewards" : "Sign in or create an account";
}

/**
 * Keeps `--header-h` on the root element equal to the site header's height
 * (it wraps on narrow screens), so the game page can fit the board and both
 * clocks in the window height.
 */
export function trackHeaderHeight(doc = document) {
  const header = doc.querySelector("header.site");
  if (!header) return;
  const set = () => doc.documentElement.style.setProperty("--header-h", `${header.offsetHeight}px`);
  set();
  new ResizeObserver(set).observe(header);
}
