// End-to-end harness: starts the real chess server on a free port with a
// fresh SQLite database, drives Debian's chromium through playwright-core,
// and offers small helpers that act the way a person does (click squares,
// drag pieces, press keys) and wait for what the page shows.

import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { before, after } from "node:test";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const WEB_DIR = path.resolve(here, "..");
export const REPO_DIR = path.resolve(WEB_DIR, "..");
export const SCREENSHOT_DIR = path.join(WEB_DIR, "screenshots");

const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/** Path of the server binary: $CHESS_SERVER_BIN, else the cargo target's debug build. */
export function serverBinary() {
  if (process.env.CHESS_SERVER_BIN) return process.env.CHESS_SERVER_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? path.join(REPO_DIR, "target");
  return path.join(target, "debug", "chess-server");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A running server. `stop()` ends it (SIGTERM, as an operator would) and
 * `start()` brings it back on the same port and database.
 */
export class TestServer {
  constructor({ env = {} } = {}) {
    this.extraEnv = env;
    this.dir = mkdtempSync(path.join(tmpdir(), "chess-e2e-"));
    this.port = null;
    this.child = null;
    this.log = [];
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start() {
    const bin = serverBinary();
    if (!existsSync(bin)) throw new Error(`server binary not found at ${bin}: run cargo build -p chess-server`);
    this.port ??= await freePort();
    this.child = spawn(bin, [], {
      cwd: this.dir,
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: String(this.port),
        DATABASE_URL: `sqlite://${path.join(this.dir, "chess.db")}`,
        CHESS_DATA_DIR: path.join(this.dir, "data"),
        WEB_DIR,
        RUST_LOG: process.env.RUST_LOG ?? "warn",
        ...this.extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (chunk) => {
      this.log.push(chunk.toString());
      if (this.log.length > 400) this.log.splice(0, 200);
    };
    this.child.stdout.on("data", keep);
    this.child.stderr.on("data", keep);
    const exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    for (let i = 0; i < 200; i++) {
      const code = await Promise.race([exited, sleep(50).then(() => undefined)]);
      if (code !== undefined) throw new Error(`server exited with ${code}:\n${this.log.join("")}`);
      try {
        const res = await fetch(`${this.url}/healthz`);
        if (res.ok) return this;
      } catch {
        // not listening yet
      }
    }
    throw new Error(`server did not answer /healthz within 10 s:\n${this.log.join("")}`);
  }

  async stop() {
    if (!this.child || this.child.exitCode !== null) return;
    const done = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    const timeout = sleep(10_000).then(() => this.child.kill("SIGKILL"));
    await Promise.race([done, timeout]);
    this.child = null;
  }

  async dispose() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Launches headless chromium (a fresh profile per launch). */
export async function launchBrowser() {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
}

/**
 * A TCP relay from `port` to the server's `targetPort`, standing for a
 * network between a browser and the server. `silenceCurrent()` makes every
 * connection open now swallow all bytes both ways while staying open (a phone
 * that lost its signal); later connections pass (the signal is back).
 */
async function startRelay(port, targetPort) {
  const connections = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    const link = { silent: false, client, upstream };
    connections.add(link);
    client.on("data", (chunk) => { if (!link.silent) upstream.write(chunk); });
    upstream.on("data", (chunk) => { if (!link.silent) client.write(chunk); });
    // While silent not even a close gets through: the page must find out itself.
    client.on("close", () => { if (!link.silent) upstream.destroy(); connections.delete(link); });
    upstream.on("close", () => { if (!link.silent) client.destroy(); });
    client.on("error", () => {});
    upstream.on("error", () => {});
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    silenceCurrent() {
      for (const link of connections) link.silent = true;
    },
    async close() {
      for (const link of connections) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The set-up every test file shares: registers `before`/`after` hooks of the
 * enclosing suite that start a server (fresh database) and chromium, and end
 * both. Returns the suite: an object whose `server` and `browser` (and
 * `relay`, when asked for) are set once started.
 *
 * @param {object} [options]
 * @param {object} [options.env] extra environment variables of the server
 * @param {boolean} [options.relay] also start a relay to the server (see
 *   `startRelay`); the server accepts pages and sockets opened through it,
 *   and `newPlayer(suite, { url: suite.relay.url })` is a person behind it
 */
export function startServerAndBrowser({ env = {}, relay = false } = {}) {
  const suite = { server: null, browser: null, relay: null };
  before(async () => {
    const server = new TestServer({ env });
    suite.server = server;
    if (relay) {
      server.port = await freePort();
      const relayPort = await freePort();
      // Pages opened through the relay have its origin.
      server.extraEnv = { ALLOWED_ORIGINS: `http://127.0.0.1:${server.port},http://127.0.0.1:${relayPort}`, ...env };
      await server.start();
      suite.relay = await startRelay(relayPort, server.port);
    } else {
      await server.start();
    }
    suite.browser = await launchBrowser();
  });
  after(async () => {
    await suite.browser?.close();
    await suite.relay?.close();
    await suite.server?.dispose();
  });
  return suite;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core (WCAG 2.x A/AA and best practices) on the page as it is now
 * and fails with every violation listed when there is any.
 */
export async function assertAccessible(page, label) {
  // Evaluated through the DevTools protocol rather than added as a <script>:
  // the server's Content-Security-Policy (rightly) refuses inline scripts.
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document);
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary}`),
    }));
  });
  if (violations.length) {
    const lines = violations.map((v) => `- ${v.impact} ${v.id}\n    ${v.nodes.join("\n    ")}`);
    throw new Error(`axe-core on ${label}: ${violations.length} violation(s)\n${lines.join("\n")}`);
  }
}

/**
 * One person: a browser context with its own cookies (so its own guest
 * identity) and one page on the home page. `suite` is what
 * `startServerAndBrowser` returned. Options: `viewport`, `touch` (a phone),
 * `url` (the address the browser reaches the server at; default the server's).
 */
export async function newPlayer({ browser, server }, options = {}) {
  const baseURL = options.url ?? server.url;
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1100, height: 800 },
    hasTouch: options.touch ?? false,
    isMobile: options.touch ?? false,
    acceptDownloads: true,
    baseURL,
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL }).catch(() => {});
  const page = await context.newPage();
  page.on("pageerror", (err) => {
    page.__errors ??= [];
    page.__errors.push(err);
  });
  await page.goto("/");
  // The home page creates the guest identity; make sure its cookie is set before acting.
  await page.locator("#me").filter({ hasText: "You are" }).waitFor();
  return page;
}

/** Calls the server's JSON API from inside the page (so with its cookie). */
export async function api(page, method, url, body) {
  return page.evaluate(
    async ({ method, url, body }) => {
      const res = await fetch(url, {
        method,
        headers: body ? { "content-type": "application/json" } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    { method, url, body },
  );
}

export const untimed = { kind: "correspondence" };
export const blitz = { kind: "clock", initial_ms: 300_000, increment_ms: 3000 };

/**
 * Two people in one online game: `white` creates a challenge, `black` opens
 * its link (and takes the empty seat). Both pages end on the game.
 * `players.white` and `players.black` are `newPlayer` options.
 */
export async function onlineGame(suite, timeControl = blitz, players = {}) {
  const white = await newPlayer(suite, players.white);
  const black = await newPlayer(suite, players.black);
  return { white, black, ...(await challenge(white, black, timeControl)) };
}

/**
 * The person on page `white` challenges the one on page `black` (each page
 * keeps its identity, a guest or a signed-in account): both pages end on the
 * game, White to move. Returns the game's `url` and `gameId`.
 */
export async function challenge(white, black, timeControl = blitz) {
  const created = await api(white, "POST", "/api/challenges", { time_control: timeControl, color: "white" });
  await white.goto(created.url);
  await black.goto(created.url);
  await waitForStatus(black, /to move|Your move/);
  await waitForStatus(white, /Your move/);
  return { url: created.url, gameId: created.game_id };
}

/** A one-screen game (both seats), optionally from a set-up position. */
export async function localGame(page, { fen, timeControl = untimed } = {}) {
  const body = { time_control: timeControl };
  if (fen) body.fen = fen;
  const created = await api(page, "POST", "/api/games/local", body);
  await page.goto(created.url);
  await page.locator("#board [data-square]").first().waitFor();
  await waitForStatus(page, /to move/);
  return created;
}

export const square = (page, sq) => page.locator(`#board [data-square="${sq}"]`);

/** Number of moves in the move list. */
export async function moveCount(page) {
  return page.locator("#moves .move[data-ply]").count();
}

/** SAN of every move in the list. */
export async function sanList(page) {
  return page.locator("#moves .move[data-ply]").allTextContents();
}

export async function waitForMoves(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll("#moves .move[data-ply]").length === n, n);
}

/** Waits until the move list has at least `n` moves (a premove may follow at once). */
export async function waitForMovesAtLeast(page, n) {
  await page.waitForFunction((n) => document.querySelectorAll("#moves .move[data-ply]").length >= n, n);
}

export async function waitForStatus(page, pattern) {
  const re = pattern instanceof RegExp ? pattern : new RegExp(pattern);
  await page.waitForFunction(
    ({ source, flags }) => new RegExp(source, flags).test(document.querySelector("#status")?.textContent ?? ""),
    { source: re.source, flags: re.flags },
  );
}

/** Plays a move by clicking the piece then the destination, and waits for the server's move list. */
export async function clickMove(page, from, to, others = []) {
  const before = await moveCount(page);
  await square(page, from).click();
  await square(page, to).click();
  await waitForMovesAtLeast(page, before + 1);
  for (const other of others) await waitForMovesAtLeast(other, before + 1);
}

/** Drags a piece with the mouse from one square to another. */
export async function dragMove(page, from, to) {
  const a = await square(page, from).boundingBox();
  const b = await square(page, to).boundingBox();
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2 + 10, a.y + a.height / 2 + 10, { steps: 3 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
  await page.mouse.up();
}

export async function classesOf(page, sq) {
  return (await square(page, sq).getAttribute("class")).split(/\s+/);
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

/** Fails when a page threw an uncaught error (a bug in the client). */
export function assertNoPageErrors(...pages) {
  for (const p of pages) {
    if (p.__errors?.length) throw new Error(`page error: ${p.__errors.map((e) => e.stack ?? e).join("\n")}`);
  }
}
