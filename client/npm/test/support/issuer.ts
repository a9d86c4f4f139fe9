/**
 * An OpenID Connect issuer that only signs: its discovery document and key set on a loopback
 * port, and {@link Issuer.token}, which signs an RS256 ID token with the `exp` a test asks for.
 *
 * The client's tests need tokens that expire at a chosen moment, which a real provider gives
 * only after its lifetime plus the server's 30 s of clock leeway. What the server does with
 * a real provider's tokens is tested with one (`tools/oidc-provider`, in the server's and the
 * browser tests); here the subject is what the client does when a token is refused.
 */

import { createHash, createSign, generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";

/** The key id of the issuer's one key. */
const KID = "test-key";

/** A running issuer: `url` is its issuer identifier (`http://127.0.0.1:PORT`). */
export class Issuer {
  private constructor(
    private readonly http: HttpServer,
    readonly url: string,
    private readonly sign: (data: string) => string,
  ) {}

  /** Starts one on a free loopback port. */
  static async start(): Promise<Issuer> {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const jwk = { ...publicKey.export({ format: "jwk" }), kid: KID, alg: "RS256", use: "sig" };
    const http = createServer();
    await new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      http.listen(0, "127.0.0.1", resolve);
    });
    const address = http.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    http.on("request", (request, response) => {
      const body =
        request.url === "/.well-known/openid-configuration"
          ? { issuer: url, jwks_uri: `${url}/jwks` }
          : request.url === "/jwks"
            ? { keys: [jwk] }
            : undefined;
      response.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      response.end(JSON.stringify(body ?? { error: "not_found" }));
    });
    const sign = (data: string) => createSign("RSA-SHA256").update(data).sign(privateKey, "base64url");
    return new Issuer(http, url, sign);
  }

  /**
   * An ID token for `sub`, audience `aud`, with these `name` and `exp` (seconds since the
   * epoch), issued now.
   */
  token(claims: { sub: string; aud: string; exp: number; name?: string }): string {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const header = encode({ alg: "RS256", typ: "JWT", kid: KID });
    const payload = encode({ iss: this.url, iat: Math.min(now, claims.exp), jti: randomUUID(), ...claims });
    return `${header}.${payload}.${this.sign(`${header}.${payload}`)}`;
  }

  /** Stops listening. */
  async stop(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/**
 * The identity the server gives subject `sub` of issuer `iss`, as 64 hex digits: the hash
 * `wasmod_server::auth::oidc_identity` documents (`server/src/auth/oidc/identity.rs`).
 */
export function oidcIdentity(iss: string, sub: string): string {
  const hash = createHash("sha256").update("wasmod oidc identity v1");
  for (const part of [iss, sub]) {
    const bytes = Buffer.from(part, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  }
  return hash.digest("hex");
}
