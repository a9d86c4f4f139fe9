/**
 * The React quickstart in a browser, end to end: the app built by `vite build` (this
 * directory's configuration, the package linked from client/npm), served with the quickstart
 * module by a real `wasmod serve --web dist`, and used by two people in two headless Chromiums
 * (two profiles: two identities) through real key presses and clicks: each names themselves
 * and sees the other online, they chat and see each other's messages arrive, a call the
 * module refuses shows its error, and a reload signs in as the same identity (the token kept
 * in localStorage) with the conversation still there; the connection's state shows through a
 * server restart (useConnection re-rendering), after which they chat on. (That bob sees alice online again after
 * her reload is not asserted: the quickstart module marks a user away when any connection of
 * theirs closes, and the server may see the old page's close after the new page's connect.)
 *
 * Then the same app from Vite's dev server (`npm run dev`), its `/v1` proxied to the module,
 * as the README says to develop it.
 *
 * The server and browser helpers are the package's (client/npm/test/support/): Debian's
 * Chromium and chromedriver, no browser download.
 */

import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "../../../../client/npm/test/support/chromium.ts";
import { Server, freePort, tempDir } from "../../../../client/npm/test/support/server.ts";

const APP = fileURLToPath(new URL("..", import.meta.url));

/** What a page shows, read by one script. */
interface Shown {
  status: string;
  identity: string;
  name: string;
  online: string[];
  away: string[];
  messages: { sender: string; text: string }[];
  error: string;
}

const READ = `
  const texts = (css) => Array.from(document.querySelectorAll(css), (e) => e.textContent);
  return {
    status: document.getElementById("status")?.textContent ?? "",
    identity: document.getElementById("identity")?.textContent ?? "",
    name: document.getElementById("name")?.value ?? "",
    online: texts("#online li"),
    away: texts("#away li"),
    messages: Array.from(document.querySelectorAll("#messages li"), (li) => ({
      sender: li.querySelector(".sender").textContent,
      text: li.querySelector(".text").textContent,
    })),
    error: document.getElementById("error")?.textContent ?? "",
  };
`;

describe("the React quickstart chat, in two Chromiums", () => {
  const data = tempDir();
  const profiles = [tempDir(), tempDir()];
  const dist = join(tempDir().path, "dist");
  let port: number;
  let server: Server;
  let alice: Browser;
  let bob: Browser;

  beforeAll(async () => {
    // `vite build` as `npm run build` runs it: in its own process, as Vitest's NODE_ENV
    // ("test") would otherwise give the development build of React.
    const vite = join(APP, "node_modules", "vite", "bin", "vite.js");
    const { NODE_ENV: _, ...env } = process.env;
    execFileSync(process.execPath, [vite, "build", "--logLevel", "warn", "--outDir", dist, "--emptyOutDir"], {
      cwd: APP,
      env,
      stdio: "pipe",
      timeout: 120_000,
    });
    port = await freePort();
    server = await Server.start({ port, data: data.path, web: dist });
    [alice, bob] = await Promise.all(profiles.map((profile) => Browser.start(profile.path)));
  });

  afterAll(async () => {
    await Promise.all([alice?.stop(), bob?.stop()]);
    await server?.stop();
    for (const dir of [data, ...profiles]) dir.remove();
  });

  /** What `browser`'s page shows once `check` holds of it (polled), or a failure saying what it showed. */
  async function until(browser: Browser, what: string, check: (shown: Shown) => boolean): Promise<Shown> {
    let last: Shown;
    const start = Date.now();
    for (;;) {
      last = (await browser.execute(`return (() => {${READ}})();`)) as Shown;
      if (check(last)) return last;
      if (Date.now() - start > 60_000) {
        throw new Error(`${what}: not within 60 s; the page shows ${JSON.stringify(last)}\n${server.recentLogs()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const subscribed = (shown: Shown) => shown.status === "connected" && /^[0-9a-f]{64}$/.test(shown.identity);

  it("lets two people name themselves, see each other online, and chat", async () => {
    await Promise.all([alice.goto(`${server.url}/`), bob.goto(`${server.url}/`)]);
    const [a, b] = await Promise.all([
      until(alice, "alice's page subscribed", subscribed),
      until(bob, "bob's page subscribed", subscribed),
    ]);
    expect(a.identity).not.toBe(b.identity);
    // Before choosing, a name is `user-` and the identity's first digits (the module's default).
    expect(a.name).toBe(`user-${a.identity.slice(0, 8)}`);

    await alice.type("#name", "alice");
    await alice.click("#rename button");
    await bob.type("#name", "bob");
    await bob.click("#rename button");
    for (const [browser, who] of [[alice, "alice"], [bob, "bob"]] as const) {
      await until(browser, `${who} seeing both online`, (shown) =>
        ["alice", "bob"].every((name) => shown.online.includes(name)),
      );
    }

    await alice.type("#text", "hello bob");
    await alice.click("#send button");
    await until(bob, "alice's message at bob's", (shown) =>
      shown.messages.some((m) => m.sender === "alice" && m.text === "hello bob"),
    );
    // The box is cleared once the server has the message.
    expect(await alice.execute(`return document.getElementById("text").value`)).toBe("");

    await bob.type("#text", "hi alice");
    await bob.click("#send button");
    const seen = await until(alice, "bob's answer at alice's", (shown) =>
      shown.messages.some((m) => m.sender === "bob" && m.text === "hi alice"),
    );
    // Oldest first, with the names the senders chose.
    expect(seen.messages.slice(-2)).toEqual([
      { sender: "alice", text: "hello bob" },
      { sender: "bob", text: "hi alice" },
    ]);
  });

  it("shows the module's refusal of a call", async () => {
    await bob.type("#name", "alice");
    await bob.click("#rename button");
    await until(bob, "the refusal shown", (shown) => shown.error.includes("the name `alice` is taken"));
  });

  it("keeps the identity, the name and the conversation across a reload", async () => {
    const before = (await alice.execute(`return (() => {${READ}})();`)) as Shown;
    await alice.reload();
    const after = await until(alice, "alice's page back", (shown) => subscribed(shown) && shown.messages.length > 0);
    expect(after.identity).toBe(before.identity);
    expect(after.name).toBe("alice");
    expect(after.messages).toEqual(before.messages);
    // Only the two identities: none was made by the reload (nor by the first visits).
    expect(after.online.length + after.away.length).toBe(2);
  });

  it("shows the connection's state through a server restart, and carries on", async () => {
    await server.stop();
    await until(alice, "alice's page reconnecting", (shown) => shown.status === "reconnecting");
    server = await Server.start({ port, data: data.path, web: dist });
    await until(alice, "alice's page back", (shown) => shown.status === "connected");
    await until(bob, "bob's page back", (shown) => shown.status === "connected");
    await bob.type("#text", "after the restart");
    await bob.click("#send button");
    await until(alice, "bob's message after the restart", (shown) =>
      shown.messages.some((m) => m.sender === "bob" && m.text === "after the restart"),
    );
  });

  it("works from Vite's dev server, the API proxied to the module", async () => {
    // vite.config.ts proxies /v1 to WASMOD_URL.
    process.env.WASMOD_URL = server.url;
    const dev = await createServer({ root: APP, logLevel: "warn", server: { host: "127.0.0.1", port: 0 } });
    try {
      await dev.listen();
      const { port } = dev.httpServer!.address() as { port: number };
      const people = (shown: Shown) => shown.online.length + shown.away.length;
      const before = people((await alice.execute(`return (() => {${READ}})();`)) as Shown);
      await bob.goto(`http://127.0.0.1:${port}/`);
      const shown = await until(bob, "bob's page from the dev server", (shown) =>
        subscribed(shown) && shown.messages.some((m) => m.text === "hello bob"),
      );
      // Another origin, another localStorage: a new identity, which can chat too.
      await bob.type("#text", "from the dev server");
      await bob.click("#send button");
      await until(alice, "the dev server's message at alice's", (shown) =>
        shown.messages.some((m) => m.text === "from the dev server"),
      );
      // The dev server's React runs effects twice (StrictMode): still one new identity, not a
      // second one from a connection begun and dropped by the first run.
      expect(people(shown)).toBe(before + 1);
    } finally {
      await dev.close();
      delete process.env.WASMOD_URL;
    }
  });
});
