// A real OpenID Connect provider (the `oidc-provider` package) on loopback,
// for the chess server's sign-in tests: the Rust tests in
// crates/chess-server/tests/api/oidc.rs and the Chromium test in
// web/e2e/oidc.test.js start it as a child process.
//
// Settings (environment): PORT (required), CLIENT_ID, CLIENT_SECRET,
// REDIRECT_URI (the chess server's callback), and TAMPER, empty or one of
// `signature`, `audience`, `nonce`: the ID token the provider issues is then
// altered on its way out of the token endpoint (its signature broken, or
// re-signed with the provider's own key claiming another audience or nonce),
// so the tests can show the server refusing each.
//
// Its development interactions are its own login and consent pages: any
// login and password sign in. The login is the account's `sub`; its
// `preferred_username` is the login up to a `#`, so `alice#1` and `alice#2`
// are two people who both want the name "alice".
//
// It prints `ready <issuer>` on stdout once it listens.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';

import { importJWK, SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('PORT must be the port to listen on');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const clientId = process.env.CLIENT_ID ?? 'chess';
const clientSecret = process.env.CLIENT_SECRET ?? 'chess-test-client-secret';
const redirectUri = process.env.REDIRECT_URI ?? 'http://127.0.0.1:8080/auth/oidc/callback';
const tamper = process.env.TAMPER ?? '';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key-1', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: { openid: ['sub'], profile: ['preferred_username', 'name'] },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  ttl: {
    AuthorizationCode: 60,
    IdToken: 300,
    AccessToken: 300,
    Interaction: 600,
    Session: 600,
    Grant: 600,
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        const username = id.split('#')[0];
        return { sub: id, preferred_username: username, name: username };
      },
    };
  },
});

async function alter(idToken) {
  if (tamper === 'signature') {
    const [header, payload, signature] = idToken.split('.');
    // Another signature of the right length: flip bits in its middle.
    const bytes = Buffer.from(signature, 'base64url');
    bytes[bytes.length >> 1] ^= 0xff;
    return `${header}.${payload}.${bytes.toString('base64url')}`;
  }
  if (tamper === 'audience' || tamper === 'nonce') {
    const claims = decodeJwt(idToken);
    const header = decodeProtectedHeader(idToken);
    if (tamper === 'audience') claims.aud = 'another-client';
    if (tamper === 'nonce') claims.nonce = 'not-the-nonce-that-was-sent';
    const key = await importJWK(signingKey, 'RS256');
    return new SignJWT(claims).setProtectedHeader(header).sign(key);
  }
  return idToken;
}

provider.use(async (ctx, next) => {
  await next();
  if (tamper && ctx.path === '/token' && ctx.body && typeof ctx.body === 'object' && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await alter(ctx.body.id_token) };
  }
});

const server = http.createServer(provider.callback());
server.listen(port, '127.0.0.1', () => {
  console.log(`ready ${issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
