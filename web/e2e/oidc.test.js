// Sign-in with the host platform in a real browser: a real OpenID provider
// (the npm package `oidc-provider`, scripts/oidc-provider, installed by
// scripts/ensure-oidc-provider.sh) on loopback, the server configured for it
// with local accounts off. A guest clicks "Sign in with Test Platform", logs
// in on the provider's own login page, consents, and lands back signed in,
// keeping their guest identity. CHESS_SKIP_OIDC_TESTS=1 skips it.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { REPO_DIR, TestServer, launchBrowser, newPlayer, api, screenshot, assertNoPageErrors } from "./harness.js";

const PROVIDER_DIR = path.join(REPO_DIR, "scripts", "oidc-provider");
const skip = process.env.CHESS_SKIP_OIDC_TESTS === "1";

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts the provider on `port`; resolves with the child once it listens. */
function startProvider(port, redirectUri) {
  if (!existsSync(path.join(PROVIDER_DIR, "node_modules", "oidc-provider"))) {
    throw new Error("the test OpenID provider is not installed: run scripts/ensure-oidc-provider.sh");
  }
  const child = spawn(process.execPath, [path.join(PROVIDER_DIR, "provider.mjs")], {
    env: { ...process.env, PORT: String(port), CLIENT_ID: "chess-e2e", CLIENT_SECRET: "chess-e2e-secret-0123456789", REDIRECT_URI: redirectUri },
    stdio: ["ignore", "pipe", "ignore"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("ready ")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the provider exited with ${code}: ${out}`)));
  });
}

describe("sign-in with the host platform", { skip }, () => {
  const suite = { server: null, browser: null, provider: null, issuer: null };

  before(async () => {
    const [serverPort, providerPort] = [await freePort(), await freePort()];
    const publicUrl = `http://127.0.0.1:${serverPort}`;
    suite.issuer = `http://127.0.0.1:${providerPort}`;
    suite.provider = await startProvider(providerPort, `${publicUrl}/auth/oidc/callback`);
    suite.server = new TestServer({
      env: {
        PUBLIC_URL: publicUrl,
        OIDC_ISSUER: suite.issuer,
        OIDC_CLIENT_ID: "chess-e2e",
        OIDC_CLIENT_SECRET: "chess-e2e-secret-0123456789",
        OIDC_PROVIDER_NAME: "Test Platform",
        LOCAL_ACCOUNTS: "false",
      },
    });
    suite.server.port = serverPort;
    await suite.server.start();
    suite.browser = await launchBrowser();
  });

  after(async () => {
    await suite.browser?.close();
    await suite.server?.dispose();
    suite.provider?.kill();
  });

  test("a guest clicks Sign in with Test Platform, logs in at the provider, consents and is signed in", async () => {
    const page = await newPlayer(suite);
    const guest = await api(page, "GET", "/api/me");
    assert.equal(guest.kind, "guest");

    await page.locator("#account-link").click();
    await page.waitForURL(/\/account\.html$/);
    await page.locator("#account-loading").waitFor({ state: "hidden" });
    // Local accounts are off: only the platform's button is offered.
    const button = page.getByRole("link", { name: "Sign in with Test Platform" });
    await button.waitFor();
    assert.equal(await page.locator("#local-sign-in").isHidden(), true);
    assert.equal(await page.locator("#local-sign-up").isHidden(), true);
    await screenshot(page, "oidc-sign-in-button");

    await button.click();
    // The provider's own login page.
    await page.locator('input[name="login"]').waitFor();
    assert.ok(page.url().startsWith(`${suite.issuer}/interaction/`), page.url());
    await page.locator('input[name="login"]').fill("zoe");
    await page.locator('input[name="password"]').fill("any password");
    await page.locator('button[type="submit"]').click();
    // Its consent page.
    await page.getByRole("button", { name: "Continue" }).click();

    await page.waitForURL(`${suite.server.url}/account.html`);
    await page.locator("#account-name").filter({ hasText: "zoe" }).waitFor();
    assert.equal(await page.locator("#account-link").textContent(), "zoe");
    const account = await api(page, "GET", "/api/account");
    assert.equal(account.username, "zoe");
    assert.equal(account.id, guest.id, "the guest became the account, keeping their games");
    assert.equal(account.has_password, false);
    // A platform account signs in at the platform: no password to change here.
    await page.locator("#password-change").waitFor({ state: "hidden" });
    await screenshot(page, "oidc-signed-in");
    assertNoPageErrors(page);
  });
});
