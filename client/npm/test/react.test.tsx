// @vitest-environment jsdom
/**
 * The React bindings (`@wasmod/client/react`) with React's own testing conventions: Vitest,
 * Testing Library and jsdom. The cache under the hooks is a real one, a `Replay` fed the shared
 * vectors (client/vectors/) step by step: components re-render when rows enter, leave or
 * change, show what a filter keeps, and leave no row callback behind when they unmount (the
 * cache is wrapped to count the registrations that are live). The connection's status is
 * tested against a server that is not there; a live server is the browser test's
 * (examples/quickstart/react/).
 */

import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { URL as NodeURL, fileURLToPath } from "node:url";
import { StrictMode, useCallback, useState } from "react";
import { act, cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Replay, init, type Unlisten } from "../dist/node.js";
import {
  WasmodProvider,
  bindHooks,
  useCall,
  useConnection,
  useTable,
  type Cache,
} from "../dist/react-node.js";
import type { Chat, Message } from "./support/chat.js";

// Node's URL: jsdom replaces the global one, which fileURLToPath does not take.
const vectors = fileURLToPath(new NodeURL("../../vectors/", import.meta.url));
const manifest = JSON.parse(readFileSync(`${vectors}vectors.json`, "utf8")) as {
  module: string;
  steps: { name: string; frame: string; plain?: string; compression: string }[];
};


const typed = bindHooks<Chat>();

const ALICE = "a1".repeat(32);
const BOB = "b0".repeat(32);

/** A Replay of the vectors' module, and how to apply its steps up to one by name. */
function replay(): { cache: Replay<Chat>; through: (step: string) => void } {
  const cache = new Replay<Chat>(readFileSync(`${vectors}${manifest.module}`, "utf8"));
  let next = 0;
  return {
    cache,
    through(step: string) {
      const last = manifest.steps.findIndex((s) => s.name === step);
      expect(last, `step ${step}`).toBeGreaterThanOrEqual(next);
      act(() => {
        for (; next <= last; next++) {
          // A Replay reads uncompressed frames: a compressed step's message comes so.
          const step = manifest.steps[next]!;
          const file = step.plain ?? step.frame;
          const frame = new Uint8Array(readFileSync(`${vectors}${file}`));
          try {
            cache.apply(frame);
          } catch {
            // The malformed steps throw, changing nothing.
          }
        }
      });
    },
  };
}

/** A cache that counts its row callbacks registered and not yet removed. */
function counted(cache: Cache<Chat>): Cache<Chat> & { live: () => number } {
  let live = 0;
  const track = (unlisten: Unlisten): Unlisten => {
    live += 1;
    let removed = false;
    return () => {
      if (!removed) live -= 1;
      removed = true;
      unlisten();
    };
  };
  return {
    live: () => live,
    rows: (table) => cache.rows(table),
    onInsert: (table, callback) => track(cache.onInsert(table, callback)),
    onDelete: (table, callback) => track(cache.onDelete(table, callback)),
    onUpdate: (table, callback) => track(cache.onUpdate(table, callback)),
  };
}

/** The messages, in id order, as a list; counts its renders. */
function Messages({ renders, from }: { renders?: { count: number }; from?: string }) {
  if (renders) renders.count += 1;
  const filter = useCallback((row: Message) => from === undefined || row.sender === from, [from]);
  const messages = typed.useTable("message", filter);
  return (
    <ul aria-label={from === undefined ? "messages" : `messages from ${from.slice(0, 2)}`}>
      {[...messages]
        .sort((a, b) => Number(a.id) - Number(b.id))
        .map((message) => (
          <li key={String(message.id)}>{message.text.slice(0, 12)}</li>
        ))}
    </ul>
  );
}

/** Who is online, by name. */
function Online() {
  const online = typed.useTable("user", (user) => user.online);
  return <p aria-label="online">{online.map((user) => user.name).sort().join(",")}</p>;
}

/** A loopback port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const items = (label: string) =>
  Array.from(screen.getByRole("list", { name: label }).querySelectorAll("li"), (li) => li.textContent);

beforeAll(async () => {
  await init();
});

afterEach(() => {
  cleanup();
});

describe("useTable over a Replay", () => {
  it("renders the rows and re-renders as rows enter, leave and change", () => {
    const { cache, through } = replay();
    render(
      <WasmodProvider<Chat> client={cache}>
        <Messages />
        <Online />
      </WasmodProvider>,
    );
    expect(items("messages")).toEqual([]);
    expect(screen.getByLabelText("online").textContent).toBe("");

    through("subscribe-applied"); // Three messages in; alice online, bob away.
    expect(items("messages")).toEqual(["hello", "hi alice", "how are you?"]);
    expect(screen.getByLabelText("online").textContent).toBe("alice");

    through("transaction-gzip"); // Bob comes online (an update), message 1 goes, 4 and 5 come.
    expect(items("messages")).toEqual(["hi alice", "how are you?", "fine, thanks", "glad to hear"]);
    expect(screen.getByLabelText("online").textContent).toBe("alice,bob");
  });

  it("renders only the rows the filter keeps, and a new filter's", () => {
    const { cache, through } = replay();
    through("reducer-result-brotli");
    const { rerender } = render(
      <WasmodProvider<Chat> client={cache}>
        <Messages from={BOB} />
      </WasmodProvider>,
    );
    const bobs = cache.rows("message").filter((row) => row.sender === BOB);
    expect(bobs.length).toBeGreaterThan(0);
    expect(items("messages from b0")).toEqual(
      bobs.sort((a, b) => Number(a.id) - Number(b.id)).map((row) => row.text.slice(0, 12)),
    );
    rerender(
      <WasmodProvider<Chat> client={cache}>
        <Messages from={ALICE} />
      </WasmodProvider>,
    );
    const alices = cache.rows("message").filter((row) => row.sender === ALICE);
    expect(items("messages from a1")).toHaveLength(alices.length);
    expect(alices.length).not.toBe(bobs.length);
  });

  it("re-renders once per batch of changes, and not for messages that change no row", () => {
    const { cache, through } = replay();
    through("subscribe-applied");
    const renders = { count: 0 };
    render(
      <WasmodProvider<Chat> client={cache}>
        <Messages renders={renders} />
      </WasmodProvider>,
    );
    const mounted = renders.count;
    expect(mounted).toBe(1);
    through("transaction-gzip"); // Messages change: one render (React batches the callbacks).
    expect(renders.count).toBe(mounted + 1);
    through("call-result"); // Only non-row messages and one message row: one render.
    expect(renders.count).toBe(mounted + 2);
    through("malformed-gzip"); // Nothing changes.
    expect(renders.count).toBe(mounted + 2);
  });

  it("registers one set of callbacks per table however many components show it, and removes them on unmount", () => {
    const { cache: replayed, through } = replay();
    const cache = counted(replayed);
    const renders = { count: 0 };
    function Page() {
      const [shown, setShown] = useState(2);
      return (
        <>
          <button onClick={() => setShown((n) => n - 1)}>hide one</button>
          {shown >= 1 && <Messages renders={renders} />}
          {shown >= 2 && <Messages from={ALICE} />}
        </>
      );
    }
    render(
      <WasmodProvider<Chat> client={cache}>
        <Page />
      </WasmodProvider>,
    );
    expect(cache.live()).toBe(3); // message: insert, delete, update.
    act(() => screen.getByRole("button").click());
    expect(cache.live()).toBe(3); // One component still shows the table.
    act(() => screen.getByRole("button").click());
    expect(cache.live()).toBe(0);
    const before = renders.count;
    through("transaction-gzip");
    expect(renders.count).toBe(before);

    // Mounting again reads the rows that changed while nobody listened.
    render(
      <WasmodProvider<Chat> client={cache}>
        <Messages />
      </WasmodProvider>,
    );
    expect(items("messages")).toEqual(["hi alice", "how are you?", "fine, thanks", "glad to hear"]);
    cleanup();
    expect(cache.live()).toBe(0);
  });

  it("leaves nothing registered under StrictMode's double effects", () => {
    const { cache: replayed, through } = replay();
    const cache = counted(replayed);
    render(
      <StrictMode>
        <WasmodProvider<Chat> client={cache}>
          <Messages />
          <Online />
        </WasmodProvider>
      </StrictMode>,
    );
    expect(cache.live()).toBe(6);
    through("subscribe-applied");
    expect(items("messages")).toHaveLength(3);
    cleanup();
    expect(cache.live()).toBe(0);
  });

  it("refuses a table the module does not have: a type error, and at run time naming it", () => {
    const { cache } = replay();
    function Wrong() {
      // A misspelt table is a type error with the module's table map (tsc checks this file)...
      // @ts-expect-error "mesage" is not a table of Chat.
      typed.useTable("mesage");
      return null;
    }
    const error = console.error;
    console.error = () => {};
    try {
      expect(() =>
        render(
          <WasmodProvider<Chat> client={cache}>
            <Wrong />
          </WasmodProvider>,
        ),
      ).toThrow(/mesage/);
    } finally {
      console.error = error;
    }
  });

  it("needs a provider, and says so", () => {
    function Orphan() {
      useTable("message");
      return null;
    }
    const error = console.error;
    console.error = () => {};
    try {
      expect(() => render(<Orphan />)).toThrow(/WasmodProvider/);
    } finally {
      console.error = error;
    }
  });
});

describe("useConnection", () => {
  function Status() {
    const { status, error, client } = useConnection();
    return (
      <p aria-label="status">
        {status}
        {error ? `: ${error.message}` : ""}
        {client ? " (client)" : ""}
      </p>
    );
  }

  it("is connected over a given cache, with no client", () => {
    const { cache } = replay();
    render(
      <WasmodProvider<Chat> client={cache}>
        <Status />
      </WasmodProvider>,
    );
    expect(screen.getByLabelText("status").textContent).toBe("connected");
  });

  it("is connecting, then failed with the reason, for a server that is not there", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    render(
      <WasmodProvider url={url}>
        <Status />
      </WasmodProvider>,
    );
    expect(screen.getByLabelText("status").textContent).toBe("connecting");
    await waitFor(() => expect(screen.getByLabelText("status").textContent).toMatch(/^failed: .*127\.0\.0\.1/));
  });
});

describe("useCall", () => {
  function Form({ call }: { call: (text: string) => Promise<number> }) {
    const [send, state] = useCall(call);
    const [result, setResult] = useState<string>("");
    return (
      <>
        <button onClick={() => void send("hi").then((r) => setResult(String(r)))}>send</button>
        <p aria-label="state">
          {state.pending} {state.error?.message ?? "-"} {result}
        </p>
      </>
    );
  }

  it("counts pending calls, resolves with the result, and keeps the last error until a success", async () => {
    const settle: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
    const call = (text: string) =>
      new Promise<number>((resolve, reject) => {
        expect(text).toBe("hi");
        settle.push({ resolve, reject });
      });
    render(<Form call={call} />);
    const state = () => screen.getByLabelText("state").textContent;
    expect(state()).toBe("0 - ");
    act(() => screen.getByRole("button").click());
    act(() => screen.getByRole("button").click());
    expect(state()).toBe("2 - ");
    await act(async () => settle[0]!.reject(new Error("cannot be empty")));
    expect(state()).toBe("1 cannot be empty undefined");
    await act(async () => settle[1]!.resolve(42));
    expect(state()).toBe("0 - 42");
  });
});
