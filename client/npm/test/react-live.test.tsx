// @vitest-environment jsdom
/**
 * The React bindings against a real `wasmod serve` of the quickstart, in jsdom: a
 * `<WasmodProvider url>` connects, `useSubscription` fills the cache, `useTable` shows the rows
 * a `useCall` sends and those another client sends, `useConnection` re-renders through a
 * server restart (`reconnecting`, then `connected`), and unmounting the provider disconnects
 * its client; a provider given a token provider connects as its token's subject, connects
 * again as another when given another provider, and not when re-rendered with the same one.
 * The sockets are the `ws` package's, adapted to jsdom's realm ({@link JsdomWs}).
 */

import { useCallback } from "react";
import { act, cleanup, render, screen, waitFor } from "@testing-library/react";
import { WebSocket as Ws } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, setWebSocket, type WebSocketConstructor } from "../dist/node.js";
import { WasmodProvider, bindHooks, useCall, useSubscription } from "../dist/react-node.js";
import { Issuer, oidcIdentity } from "./support/issuer.js";
import { Server, freePort, tempDir } from "./support/server.js";
import type { Chat, User } from "./support/chat.js";


/**
 * `ws`'s WebSocket, its binary messages copied into `ArrayBuffer`s of the global realm. In
 * Vitest's jsdom environment the global `ArrayBuffer` is jsdom's, and the wasm glue's
 * `instanceof ArrayBuffer` does not recognise Node's (it took every binary frame for a text
 * frame: "a text frame on the binary protocol"). Browsers and Node have one realm.
 */
function JsdomWs(url: string, protocol?: string | string[]): Ws {
  const socket = new Ws(url, protocol);
  let handler: ((event: { data: unknown }) => void) | null = null;
  Object.defineProperty(socket, "onmessage", {
    get: () => handler,
    set: (set: typeof handler) => {
      handler = set;
    },
  });
  socket.on("message", (data: ArrayBuffer | Buffer, isBinary: boolean) => {
    if (handler === null) return;
    if (!isBinary) {
      handler({ data: data.toString() });
      return;
    }
    const bytes = ArrayBuffer.isView(data) ? data : new Uint8Array(data);
    const copy = new globalThis.ArrayBuffer(bytes.byteLength);
    new Uint8Array(copy).set(bytes);
    handler({ data: copy });
  });
  return socket;
}

const { useTable, useConnection } = bindHooks<Chat>();
const QUERIES = ["SELECT * FROM message", "SELECT * FROM user"];

function ChatView() {
  const { client, status, error } = useConnection();
  const { applied } = useSubscription(QUERIES);
  const messages = useTable("message");
  const mine = useTable(
    "user",
    useCallback((user: User) => user.identity === client?.identity, [client]),
  );
  const [send, sending] = useCall((text: string) => client!.callReducer("send", { text }));
  return (
    <>
      <p aria-label="status">{applied ? status : `${status} (subscribing)`}</p>
      <p aria-label="connection error">{error?.message ?? ""}</p>
      <p aria-label="me">{mine.map((user) => `${user.name}:${user.online}`).join(",")}</p>
      <ul aria-label="messages">
        {[...messages]
          .sort((a, b) => Number(a.id) - Number(b.id))
          .map((message) => (
            <li key={String(message.id)}>{message.text}</li>
          ))}
      </ul>
      <button onClick={() => void send("hello from react")}>send</button>
      <button onClick={() => void send("")}>send nothing</button>
      <p aria-label="error">{sending.error?.message ?? ""}</p>
    </>
  );
}

const texts = () => Array.from(screen.getByRole("list", { name: "messages" }).querySelectorAll("li"), (li) => li.textContent);
const status = () => screen.getByLabelText("status").textContent;

/** Who the provider's connection is: `status:identity`. */
function Who() {
  const { client, status } = useConnection();
  return <p aria-label="who">{`${status}:${client?.identity ?? ""}`}</p>;
}

describe("the React bindings against wasmod serve", () => {
  const data = tempDir();
  let issuer: Issuer;
  let port: number;
  let server: Server;
  const others: Client<Chat>[] = [];
  /** Serves the quickstart, accepting the issuer's tokens for the audience `spa` too. */
  const serve = () =>
    Server.start({ port, data: data.path, args: ["--oidc-issuer", `${issuer.url}=spa`, "--oidc-allow-http-loopback"] });

  beforeAll(async () => {
    await setWebSocket(JsdomWs as unknown as WebSocketConstructor);
    issuer = await Issuer.start();
    port = await freePort();
    server = await serve();
  });

  afterAll(async () => {
    cleanup();
    for (const client of others) await client.disconnect();
    await server?.stop();
    await issuer?.stop();
    data.remove();
  });

  it("connects, subscribes, calls, re-renders through a restart, and disconnects on unmount", async () => {
    let connected: Client<Chat> | undefined;
    const { unmount } = render(
      <WasmodProvider<Chat> url={server.url} onConnect={(client) => (connected = client)}>
        <ChatView />
      </WasmodProvider>,
    );
    expect(status()).toBe("connecting (subscribing)");
    await waitFor(() => expect(status()).toBe("connected"), { timeout: 20_000 });
    expect(connected?.identity).toMatch(/^[0-9a-f]{64}$/);
    expect(screen.getByLabelText("me").textContent).toBe(`user-${connected!.identity.slice(0, 8)}:true`);

    // A call of this component, and its refusal.
    act(() => screen.getByRole("button", { name: "send" }).click());
    await waitFor(() => expect(texts()).toContain("hello from react"));
    act(() => screen.getByRole("button", { name: "send nothing" }).click());
    await waitFor(() => expect(screen.getByLabelText("error").textContent).toMatch(/cannot be empty/));

    // Another client's rows arrive.
    const other = await Client.connect<Chat>(server.url);
    others.push(other);
    await other.callReducer("send", ["hello from elsewhere"]);
    await waitFor(() => expect(texts()).toContain("hello from elsewhere"), { timeout: 20_000 });

    // The connection's state re-renders the component through a restart.
    await server.stop();
    await waitFor(() => expect(status()).toBe("reconnecting"), { timeout: 20_000 });
    server = await serve();
    await waitFor(() => expect(status()).toBe("connected"), { timeout: 60_000 });
    await waitFor(() => expect(other.connectionState).toBe("connected"), { timeout: 60_000 });
    await other.callReducer("send", ["after the restart"]);
    await waitFor(() => expect(texts()).toContain("after the restart"), { timeout: 20_000 });

    // The provider made the connection: unmounting ends it.
    unmount();
    await waitFor(() => expect(connected!.connectionState).toBe("disconnected"), { timeout: 20_000 });
  }, 200_000);

  it("connects with a token provider, again with another, and not again with the same one", async () => {
    const calls = { alice: 0, bob: 0 };
    const signedIn = (sub: "alice" | "bob") => async () => {
      calls[sub] += 1;
      return issuer.token({ sub, aud: "spa", exp: Math.floor(Date.now() / 1000) + 3600 });
    };
    const [alice, bob] = [signedIn("alice"), signedIn("bob")];
    const who = () => screen.getByLabelText("who").textContent;
    const { rerender, unmount } = render(
      <WasmodProvider<Chat> url={server.url} token={alice}>
        <Who />
      </WasmodProvider>,
    );
    await waitFor(() => expect(who()).toBe(`connected:${oidcIdentity(issuer.url, "alice")}`), { timeout: 20_000 });

    // The same provider: the same connection, the provider not asked again.
    rerender(
      <WasmodProvider<Chat> url={server.url} token={alice}>
        <Who />
      </WasmodProvider>,
    );
    expect(who()).toBe(`connected:${oidcIdentity(issuer.url, "alice")}`);

    // Another (someone else signed in): a new connection, as them.
    rerender(
      <WasmodProvider<Chat> url={server.url} token={bob}>
        <Who />
      </WasmodProvider>,
    );
    await waitFor(() => expect(who()).toBe(`connected:${oidcIdentity(issuer.url, "bob")}`), { timeout: 20_000 });
    expect(calls).toEqual({ alice: 1, bob: 1 });
    unmount();
  }, 60_000);
});
