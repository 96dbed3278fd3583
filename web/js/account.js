// The account page: sign up, sign in (locally, or with the host platform),
// sign out, change password, and the
// signed-in account's rewards (docs/protocol.md, "Identity" and "Rewards"), and
// its API access tokens (docs/lichess-api.md).

import * as api from "./api.js";
import { showAccountLink } from "./header.js";
import { followLobby } from "./lobby-follow.js";
import { Sounds } from "./sound.js";
import { ratingsSummary } from "./ratings.js";
import { accountErrorText, deliveryText, formatCents, rewardStatusText, todayText } from "./account-text.js";

const $ = (sel) => document.querySelector(sel);

/** Shows a message above the forms: an error (`alert`) or a confirmation. */
function notice(text, kind = "error") {
  const el = $("#account-notice");
  el.hidden = !text;
  el.textContent = text ?? "";
  el.classList.toggle("ok", kind === "ok");
}

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Runs a form's request with its button disabled (no double submits) and
 * shows a failure in the words `accountErrorText` gives for `action`.
 */
async function submitting(form, action, request) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  notice(null);
  try {
    return await request();
  } catch (err) {
    notice(err instanceof api.ApiError ? accountErrorText(err, action) : String(err.message ?? err));
    return null;
  } finally {
    button.disabled = false;
  }
}

/** The sheet's username and password while a class account chooses its own (never stored). */
let firstSignIn = null;

/** A class account's first sign-in: its sheet's password was right; it now chooses its own. */
function askFirstPassword(username, password) {
  firstSignIn = { username, password };
  $("#signed-out").hidden = true;
  $("#first-password-name").textContent = username;
  $("#first-password").hidden = false;
  $("#first-password-form").new.focus();
}

function showSignedOut(who) {
  showAccountLink(who);
  $("#account-loading").hidden = true;
  $("#signed-in").hidden = true;
  $("#signed-out").hidden = false;
}

/** Shows the signed-in view once its rewards are loaded, so the page never shows a half-filled state. */
async function showSignedIn(username) {
  showAccountLink({ kind: "account", name: username });
  if (!(await loadRewards())) return;
  await loadTokens();
  $("#account-loading").hidden = true;
  $("#signed-out").hidden = true;
  $("#signed-in").hidden = false;
  $("#account-name").textContent = username;
  $("#profile-link").href = `/@/${encodeURIComponent(username)}`;
  await Promise.all([loadRatings(username), hidePasswordChangeWithoutPassword()]);
}

/** An account of the host platform signs in there: it has no password to change here. */
async function hidePasswordChangeWithoutPassword() {
  try {
    const res = await fetch("/api/account", { credentials: "same-origin" });
    const account = res.ok ? await res.json() : null;
    $("#password-change").hidden = account?.has_password === false;
  } catch {
    // Leave the form: changing a password is refused by the server anyway.
  }
}

/** The account's rating in each speed; a failure leaves the list empty. */
async function loadRatings(username) {
  let answer = null;
  try {
    const res = await fetch(`/api/players/${encodeURIComponent(username)}/ratings`, { credentials: "same-origin" });
    if (res.ok) answer = await res.json();
  } catch {
    // The rest of the page works without them.
  }
  $("#account-ratings").innerHTML = ratingsSummary(answer)
    .map((r) => `<li>${esc(r.name)} <strong>${esc(r.label)}</strong> <span class="muted">(${esc(r.games)} rated games)</span></li>`)
    .join("");
}

function entryRow(entry, capCents) {
  const game = `/game/${encodeURIComponent(entry.game_id)}`;
  const when = new Date(entry.created_at);
  const delivery = deliveryText(entry);
  const deliveryState = entry.delivery ? ` data-delivery="${esc(entry.delivery.state)}"` : "";
  return `<tr data-status="${esc(entry.status)}"${deliveryState}>
    <td><a href="${esc(game)}">Game ${esc(String(entry.game_id).slice(0, 8))}</a></td>
    <td class="amount">${esc(formatCents(entry.amount_cents))}</td>
    <td>${esc(rewardStatusText(entry, capCents))}${delivery ? `<br><small class="delivery">${esc(delivery)}</small>` : ""}</td>
    <td><time datetime="${esc(when.toISOString())}">${esc(when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }))}</time></td>
  </tr>`;
}

function renderRewards(rewards) {
  $("#rewards-today").textContent = todayText(rewards);
  const share = rewards.cap_cents > 0 ? Math.min(1, rewards.total_cents / rewards.cap_cents) : 0;
  $("#rewards-bar").style.width = `${Math.round(share * 100)}%`;
  $("#reward-entries").innerHTML = rewards.entries.length
    ? rewards.entries.map((e) => entryRow(e, rewards.cap_cents)).join("")
    : `<tr><td colspan="4" class="muted">No rewards yet. Win a game against another signed-in player to earn $1.</td></tr>`;
}

/**
 * Fetches and shows the rewards; false when the session has ended (the page
 * then offers the sign-in forms). Other failures are shown and leave the
 * account view usable.
 */
async function loadRewards() {
  try {
    renderRewards(await api.rewards());
  } catch (err) {
    if (err instanceof api.ApiError && err.code === "not_signed_in") {
      // The session ended elsewhere (signed out, password changed): say so and offer the forms.
      notice(accountErrorText(err, "load"));
      showSignedOut(await api.me().catch(() => null));
      return false;
    }
    notice(err instanceof api.ApiError ? accountErrorText(err, "load") : String(err.message ?? err));
  }
  return true;
}

function tokenItem(token) {
  const used = token.last_used_at ? `last used ${new Date(token.last_used_at).toLocaleString()}` : "never used";
  return `<li data-token="${esc(token.id)}"><span class="token-description">${esc(token.description)}</span>
    <span class="muted">${esc(token.scopes.join(", "))} · ${esc(used)}</span>
    <button type="button" class="revoke" data-id="${esc(token.id)}">Revoke</button></li>`;
}

/** Lists the account's working tokens (never their text, which is shown only when created). */
async function loadTokens() {
  try {
    const { tokens } = await api.listTokens();
    $("#token-list").innerHTML = tokens.length
      ? tokens.map(tokenItem).join("")
      : `<li class="muted">No tokens.</li>`;
  } catch (err) {
    notice(err instanceof api.ApiError ? accountErrorText(err, "load") : String(err.message ?? err));
  }
}

function wireTokens() {
  $("#token-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const scopes = [...f.querySelectorAll("input[name=scope]:checked")].map((box) => box.value);
    const created = await submitting(f, "token", () => api.createToken(f.description.value, scopes));
    if (!created) return;
    f.description.value = "";
    $("#new-token-text").textContent = created.token;
    $("#new-token").hidden = false;
    await loadTokens();
  });
  $("#token-list").addEventListener("click", async (e) => {
    const button = e.target.closest("button.revoke");
    if (!button) return;
    button.disabled = true;
    try {
      await api.revokeToken(button.dataset.id);
      $("#new-token").hidden = true;
      notice("Token revoked: it no longer works.", "ok");
    } catch (err) {
      notice(err instanceof api.ApiError ? accountErrorText(err, "load") : String(err.message ?? err));
    }
    await loadTokens();
  });
}

function wire() {
  wireTokens();
  $("#sign-up-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const created = await submitting(f, "sign-up", () => api.signUp(f.username.value, f.password.value));
    if (!created) return;
    f.reset();
    await showSignedIn(created.username);
    notice(`Welcome, ${created.username}: your account is ready.`, "ok");
  });
  $("#sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const button = f.querySelector("button[type=submit]");
    button.disabled = true;
    notice(null);
    try {
      const signedIn = await api.signIn(f.username.value, f.password.value);
      f.reset();
      await showSignedIn(signedIn.username);
    } catch (err) {
      if (err instanceof api.ApiError && err.code === "password_change_required") {
        askFirstPassword(f.username.value, f.password.value);
        f.reset();
      } else {
        notice(err instanceof api.ApiError ? accountErrorText(err, "sign-in") : String(err.message ?? err));
      }
    } finally {
      button.disabled = false;
    }
  });
  $("#first-password-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    if (f.new.value !== f.repeat.value) {
      notice("The two passwords differ: type the same one twice.");
      return;
    }
    const { username, password } = firstSignIn;
    const signedIn = await submitting(f, "first-password", () => api.firstPassword(username, password, f.new.value));
    if (!signedIn) return;
    f.reset();
    firstSignIn = null;
    $("#first-password").hidden = true;
    await showSignedIn(signedIn.username);
    notice(`Welcome, ${signedIn.username}: your password is saved.`, "ok");
  });
  $("#password-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.currentTarget;
    const changed = await submitting(f, "password", async () => {
      await api.changePassword(f.current.value, f.new.value);
      return true;
    });
    if (!changed) return;
    f.reset();
    notice("Password changed. Your other sessions are signed out.", "ok");
  });
  $("#sign-out").addEventListener("click", async () => {
    notice(null);
    try {
      await api.signOut();
      // Signing out clears both cookies: this browser is a new guest from here on.
      showSignedOut(await api.me());
      notice("Signed out.", "ok");
    } catch (err) {
      notice(err instanceof api.ApiError ? accountErrorText(err, "load") : String(err.message ?? err));
    }
  });
}

/**
 * Shows the ways to sign in the server offers: "Sign in with <platform>"
 * when it signs people in with a host platform, the username and password
 * forms unless local accounts are off.
 */
async function showSignInOptions() {
  const options = await api.signInOptions().catch(() => ({ local: true, platform: null }));
  if (options.platform) {
    const link = $("#platform-sign-in-link");
    link.textContent = `Sign in with ${options.platform.name}`;
    link.href = `${options.platform.start}?return_to=${encodeURIComponent("/account.html")}`;
    $("#platform-sign-in").hidden = false;
  }
  $("#local-sign-in").hidden = !options.local;
  $("#local-sign-up").hidden = !options.local;
}

async function main() {
  wire();
  await showSignInOptions();
  try {
    // Also creates the guest identity on a first visit, so a sign-up keeps this browser's games.
    const who = await api.me();
    if (who.kind === "account") await showSignedIn(who.name);
    else showSignedOut(who);
  } catch (err) {
    if (err instanceof api.ApiError && err.code === "too_many_requests") {
      // This address has made its guests for the hour (a classroom): signing
      // in needs none, so the forms are offered all the same.
      showSignedOut(null);
    } else {
      $("#account-loading").hidden = true;
      notice(err instanceof api.ApiError ? accountErrorText(err, "load") : String(err.message ?? err));
    }
  }
  // A challenge or seek of this person may start while they are here.
  followLobby({ sounds: new Sounds() });
}

main();
