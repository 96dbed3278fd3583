// A person on the web page plays a bot account that a real lichess client drives: the bot
// (scripts/lichess-e2e/bot.py, through berserk) seeks through the lichess API, the person
// takes the seek in the lobby and is mated; the page, the PGN and the rewards agree.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import {
  REPO_DIR, startServerAndBrowser, newPlayer, api, clickMove, waitForMoves, waitForStatus,
  assertNoPageErrors,
} from "./harness.js";

/** The venv's python with berserk (made by scripts/lichess-e2e/venv.sh when missing). */
function berserkPython() {
  if (process.env.LICHESS_E2E_PYTHON) return process.env.LICHESS_E2E_PYTHON;
  return execFileSync(path.join(REPO_DIR, "scripts/lichess-e2e/venv.sh"), { encoding: "utf8" }).trim();
}

/** Signs an account up and gives it a token with `scopes`, outside any browser. */
async function accountWithToken(base, username, scopes) {
  const me = await fetch(`${base}/api/me`);
  const guest = me.headers.get("set-cookie").split(";")[0];
  const signUp = await fetch(`${base}/api/account/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: guest },
    body: JSON.stringify({ username, password: "correct horse" }),
  });
  assert.equal(signUp.status, 201, await signUp.text());
  const session = signUp.headers.getSetCookie().find((c) => c.startsWith("chess_session=")).split(";")[0];
  const created = await fetch(`${base}/api/account/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: session },
    body: JSON.stringify({ description: "e2e bot", scopes }),
  });
  assert.equal(created.status, 201);
  return (await created.json()).token;
}

/** The bot process and its JSON lines, read as they come. */
function startBot(python, args) {
  const child = spawn(python, [path.join(REPO_DIR, "scripts/lichess-e2e/bot.py"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = [];
  const waiting = [];
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr += chunk; });
  readline.createInterface({ input: child.stdout }).on("line", (text) => {
    lines.push(JSON.parse(text));
    for (const wake of waiting.splice(0)) wake();
  });
  return {
    child,
    /** The first line (seen or to come) that has `key`. */
    async next(key, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find((line) => key in line);
        if (found) return found;
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`the bot never said ${key}: ${JSON.stringify(lines)}\n${stderr}`);
        }
        await new Promise((wake) => { waiting.push(wake); setTimeout(wake, 200); });
      }
    },
  };
}

describe("API access tokens on the account page", () => {
  const suite = startServerAndBrowser();

  test("a token is created with its scopes, shown once, works, and stops working when revoked", async () => {
    const page = await newPlayer(suite);
    await api(page, "POST", "/api/account/sign-up", { username: "Tokens", password: "correct horse" });
    await page.goto("/account.html");
    const form = page.locator("#token-form");
    await form.getByLabel("Description").fill("my board");
    await form.getByLabel("see challenges").uncheck();
    await form.getByRole("button", { name: "Create token" }).click();
    await page.locator("#new-token").waitFor();
    const token = (await page.locator("#new-token-text").textContent()).trim();
    assert.match(token, /^lip_[0-9a-f]{64}$/);
    const item = page.locator("#token-list li").filter({ hasText: "my board" });
    await item.getByText("board:play, challenge:write").waitFor();

    const base = suite.server.url;
    const asClient = () => fetch(`${base}/api/account`, { headers: { authorization: `Bearer ${token}` } });
    const account = await asClient();
    assert.equal(account.status, 200);
    assert.equal((await account.json()).username, "Tokens");

    await item.getByRole("button", { name: "Revoke" }).click();
    await page.locator("#account-notice").filter({ hasText: "revoked" }).waitFor();
    await page.locator("#token-list").getByText("No tokens.").waitFor();
    assert.equal((await asClient()).status, 401);
    assertNoPageErrors(page);
  });
});

describe("a bot through the lichess API", () => {
  const suite = startServerAndBrowser();
  let bot = null;
  after(() => bot?.child.kill());

  test("a person takes a bot's seek in the lobby and the bot mates them", async () => {
    const python = berserkPython();
    const base = suite.server.url;
    const token = await accountWithToken(base, "Robot", ["bot:play"]);
    const upgrade = await fetch(`${base}/api/bot/account/upgrade`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(upgrade.status, 200);

    const person = await newPlayer(suite);
    await person.locator("#lobby-state").filter({ hasText: "live" }).waitFor();
    await api(person, "POST", "/api/account/sign-up", { username: "Person", password: "correct horse" });

    // The bot plays Black: e7e5, then Qh4# after the person's f3 and g4.
    bot = startBot(python, [base, token, "5", "0", "black", "e7e5", "d8h4"]);
    await bot.next("seeking");
    const seek = person.locator("#seeks tr").filter({ hasText: "Robot" });
    await seek.getByRole("button", { name: "Join" }).click();
    await person.waitForURL(/\/game\//);
    const { game } = await bot.next("game");
    assert.equal(new URL(person.url()).pathname, `/game/${game}`);
    await waitForStatus(person, /Your move/);

    await clickMove(person, "f2", "f3");
    await waitForMoves(person, 2);
    await clickMove(person, "g2", "g4");
    await waitForMoves(person, 4);
    await waitForStatus(person, /Black wins by checkmate/);
    const end = await bot.next("end");
    assert.deepEqual(end, { end: "mate", winner: "black", moves: ["f2f3", "e7e5", "g2g4", "d8h4"] });

    const pgn = await (await fetch(`${base}/api/games/${game}/pgn`)).text();
    assert.match(pgn, /\[Result "0-1"\]/);
    assert.match(pgn, /Qh4#/);
    // A game against a bot pays nobody.
    const rewards = await api(person, "GET", "/api/account/rewards");
    assert.deepEqual(rewards.entries, []);
    assertNoPageErrors(person);
  });
});
