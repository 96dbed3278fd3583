import { test } from "node:test";
import assert from "node:assert/strict";
import {
  formatCents, waitText, accountErrorText, accountLinkText, identityText, rewardStatusText, todayText,
  deliveryText,
} from "../js/account-text.js";
import { ApiError, retryAfterSeconds } from "../js/api.js";

test("cents are shown as dollars with two decimals, by integer arithmetic", () => {
  assert.equal(formatCents(100), "$1.00");
  assert.equal(formatCents(500), "$5.00");
  assert.equal(formatCents(0), "$0.00");
  assert.equal(formatCents(5), "$0.05");
  assert.equal(formatCents(1999), "$19.99");
  assert.equal(formatCents(-250), "-$2.50");
  // 0.1 + 0.2 style errors cannot appear: 30 cents stays 30 cents.
  assert.equal(formatCents(10 + 20), "$0.30");
});

test("an amount that is not an integer number of cents is refused, not shown", () => {
  for (const bad of [1.5, "100", null, undefined, Number.NaN, Infinity]) {
    assert.throws(() => formatCents(bad), TypeError, `for ${bad}`);
  }
});

test("waits are rounded up to whole seconds, minutes or hours", () => {
  assert.equal(waitText(1), "1 second");
  assert.equal(waitText(0), "1 second");
  assert.equal(waitText(45), "45 seconds");
  assert.equal(waitText(60), "1 minute");
  assert.equal(waitText(61), "2 minutes");
  assert.equal(waitText(900), "15 minutes");
  assert.equal(waitText(3600), "1 hour");
  assert.equal(waitText(3601), "2 hours");
});

test("Retry-After in seconds is read; anything else is unknown", () => {
  assert.equal(retryAfterSeconds("120"), 120);
  assert.equal(retryAfterSeconds(" 7 "), 7);
  assert.equal(retryAfterSeconds(null), null);
  assert.equal(retryAfterSeconds(""), null);
  assert.equal(retryAfterSeconds("Wed, 21 Oct 2026 07:28:00 GMT"), null);
  assert.equal(retryAfterSeconds("-3"), null);
});

test("rule breaks show the server's exact words as a sentence", () => {
  const username = new ApiError(422, "invalid_username", "a username needs at least 3 characters, this one has 2");
  assert.equal(accountErrorText(username, "sign-up"), "A username needs at least 3 characters, this one has 2.");
  const password = new ApiError(422, "invalid_password", "a password needs at least 8 characters, this one has 5");
  assert.equal(accountErrorText(password, "sign-up"), "A password needs at least 8 characters, this one has 5.");
  assert.equal(accountErrorText(new ApiError(422, "invalid_username", ""), "sign-up"), "This username is not allowed.");
});

test("each account error code has its own plain message", () => {
  const text = (code, action = "sign-in", retryAfter = null) =>
    accountErrorText(new ApiError(400, code, "server words", retryAfter), action);
  assert.match(text("username_taken", "sign-up"), /username is taken/);
  assert.match(text("already_an_account", "sign-up"), /already signed in/);
  assert.equal(text("invalid_credentials"), "Wrong username or password.");
  assert.equal(text("invalid_credentials", "password"), "The current password is wrong.");
  assert.match(text("invalid_credentials", "first-password"), /password from your sheet is wrong/);
  assert.match(text("password_already_chosen"), /already has its own password/);
  assert.match(text("not_signed_in", "load"), /not signed in/);
  assert.equal(text("too_many_requests", "sign-in", 840), "Too many attempts. Try again in 14 minutes.");
  assert.equal(text("too_many_requests", "sign-in", null), "Too many attempts. Wait a while and try again.");
  // An unknown code falls back to the server's message rather than hiding it.
  assert.equal(text("body_too_large"), "Server words.");
  const messages = ["username_taken", "already_an_account", "invalid_credentials", "not_signed_in", "too_many_requests"].map((c) => text(c));
  assert.equal(new Set(messages).size, messages.length, "two codes share a message");
});

test("the header and identity line name the account, or offer to sign in", () => {
  const account = { id: "1", name: "Magnus", kind: "account" };
  const guest = { id: "2", name: "brave-otter-42", kind: "guest" };
  assert.equal(accountLinkText(account), "Magnus");
  assert.equal(accountLinkText(guest), "Sign in");
  assert.equal(accountLinkText(null), "Sign in");
  assert.equal(identityText(account), "You are Magnus");
  assert.equal(identityText(guest), "You are brave-otter-42 (guest)");
});

test("reward entries say whether they paid and why not", () => {
  const credited = { game_id: "g1", amount_cents: 100, day: "2026-11-29", status: "credited", created_at: 0 };
  const over = { game_id: "g2", amount_cents: 0, day: "2026-11-29", status: "over_cap", created_at: 0 };
  assert.equal(rewardStatusText(credited), "Credited");
  assert.equal(
    rewardStatusText(over, 500),
    "Not paid: over the cap ($5.00 already paid on 2026-11-29, UTC)",
  );
  assert.match(rewardStatusText({ ...over, status: "refunded" }), /Unknown status 'refunded'/);
});

test("a reward's delivery to the platform is said in plain words, with the refusal's reason", () => {
  const credited = { status: "credited", amount_cents: 100, day: "2026-12-03" };
  assert.equal(deliveryText(credited), "", "no platform configured: nothing is said");
  assert.equal(deliveryText({ ...credited, delivery: null }), "", "over the cap: nothing owed");
  assert.equal(deliveryText({ ...credited, delivery: { state: "pending", reason: null } }), "Being sent to the platform");
  assert.equal(deliveryText({ ...credited, delivery: { state: "delivered", reason: null } }), "Sent to the platform");
  assert.equal(
    deliveryText({ ...credited, delivery: { state: "refused", reason: "400 Bad Request: unknown account" } }),
    "Refused by the platform: 400 Bad Request: unknown account",
  );
  assert.equal(deliveryText({ ...credited, delivery: { state: "refused", reason: null } }), "Refused by the platform");
  assert.match(deliveryText({ ...credited, delivery: { state: "lost" } }), /Unknown delivery 'lost'/);
});

test("today's line compares the total with the cap in dollars", () => {
  assert.equal(todayText({ day: "2026-11-29", total_cents: 100, cap_cents: 500 }), "$1.00 of $5.00 today (UTC 2026-11-29)");
  assert.equal(todayText({ day: "2026-11-30", total_cents: 0, cap_cents: 500 }), "$0.00 of $5.00 today (UTC 2026-11-30)");
});
