// A real OpenID Provider (npm's `oidc-provider`, OpenID Certified) on loopback, for wasmod's
// tests. The Rust crate around it (`wasmod-oidc-provider`, `../src/lib.rs`) starts it as
//
//     node server.mjs '<settings as JSON>'
//
// and reads one line from its standard output, `listening http://127.0.0.1:PORT`, once it
// accepts connections; everything else it prints is the log a failing test shows. It exits
// when its standard input closes, that is when the test process that started it ends, however
// it ends.
//
// The settings (all fields required; the Rust side writes them):
//
//     { "port": 0,                    // 0: any free port; a restart passes the first one's
//       "keys": "/tmp/…/keys.json",   // the signing keys: made and written there if absent,
//                                     // read back on a restart (tokens signed before verify)
//       "users": [{ "sub": "alice", "name": "Alice", "email": "alice@example.com" }],
//       "clients": [{ "client_id": "spa", "client_secret": null,
//                     "redirect_uri": "http://127.0.0.1:5173/callback",
//                     "id_token_signed_response_alg": "RS256" }],
//       "id_token_ttl": 300, "access_token_ttl": 300 }   // seconds
//
// The sign-in pages are the provider's development interactions: a login form whose `login`
// field is the user's `sub` (any password), then a consent form. A `sub` that is not a
// configured user is refused (the login form comes back).

import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const settings = JSON.parse(process.argv[2]);

// One key per algorithm the clients may ask for: the provider signs an ID token with the key
// that matches the client's `id_token_signed_response_alg` (RS256 unless it says otherwise).
function makeKeys() {
  const jwk = (kid, alg, type, options) => ({
    ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
    kid,
    alg,
    use: 'sig',
  });
  return {
    keys: [
      jwk('rs256', 'RS256', 'rsa', { modulusLength: 2048 }),
      jwk('es256', 'ES256', 'ec', { namedCurve: 'P-256' }),
      jwk('eddsa', 'EdDSA', 'ed25519'),
    ],
  };
}

let jwks;
if (existsSync(settings.keys)) {
  jwks = JSON.parse(readFileSync(settings.keys, 'utf8'));
} else {
  jwks = makeKeys();
  writeFileSync(settings.keys, JSON.stringify(jwks), { mode: 0o600 });
}

const users = new Map(settings.users.map((user) => [user.sub, user]));

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(settings.port, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks,
  clients: settings.clients.map((client) => ({
    client_id: client.client_id,
    redirect_uris: [client.redirect_uri],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    id_token_signed_response_alg: client.id_token_signed_response_alg,
    ...(client.client_secret === null
      ? { token_endpoint_auth_method: 'none' }
      : { client_secret: client.client_secret, token_endpoint_auth_method: 'client_secret_post' }),
  })),
  async findAccount(_ctx, id) {
    const user = users.get(id);
    if (!user) {
      return undefined;
    }
    return {
      accountId: id,
      async claims() {
        return {
          sub: user.sub, name: user.name, email: user.email, email_verified: true,
        };
      },
    };
  },
  claims: {
    openid: ['sub'],
    profile: ['name'],
    email: ['email', 'email_verified'],
  },
  // The user's claims in the ID token itself, not only at the userinfo endpoint: the ID token
  // is what a wasmod client hands to the server.
  conformIdTokenClaims: false,
  // Every client must use PKCE (public ones must anyway).
  pkce: { required: () => true },
  // The browser SPA's token request comes from the page's origin.
  clientBasedCORS: () => true,
  ttl: {
    IdToken: settings.id_token_ttl,
    AccessToken: settings.access_token_ttl,
    AuthorizationCode: 60,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
  features: { devInteractions: { enabled: true } },
});

// The development login takes any login; this one takes only the configured users' `sub`s, and
// shows the login form again for any other (the development interactions would sign an
// unknown account in and then fail on it). The form's body is read here, so the development
// interactions read it from `req.body` (and warn once that an upstream parser ran).
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path.startsWith('/interaction/')) {
    const chunks = [];
    for await (const chunk of ctx.req) {
      chunks.push(chunk);
    }
    const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
    if (body.prompt === 'login' && !users.has(body.login)) {
      console.error(`login refused: no user ${JSON.stringify(body.login)}`);
      ctx.status = 303;
      ctx.redirect(ctx.path);
      return;
    }
    ctx.req.body = body;
  }
  await next();
});

server.on('request', provider.callback());

// The log a failing test shows: every error the provider reports.
provider.on('server_error', (_ctx, error) => console.error('server_error', error));
for (const event of ['authorization.error', 'grant.error', 'discovery.error', 'jwks.error']) {
  provider.on(event, (_ctx, error) => console.error(event, error.message, error.error_description ?? ''));
}

// The provider checks a client's metadata when it is first used: checked here, so that a
// client it refuses fails the start (with the reason in the log) rather than a sign-in.
for (const client of settings.clients) {
  await provider.Client.find(client.client_id);
}

process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

console.log(`listening ${issuer}`);
