/**
 * The typed API of `@wasmod/client`, over the wasm-bindgen bindings of `wasmod-client`
 * (`client/src/web.rs`): the same Rust client underneath (one connection task, the client
 * cache, reconnection that resumes), typed for TypeScript and with what a JavaScript app
 * expects of callbacks (each registration returns the function that removes it).
 *
 * This file knows nothing of where it runs: the entry points (`browser.ts`, `node.ts`) tell it
 * how to load the wasm ({@link setLoader}), and it loads it once, on the first `connect` or
 * `init`.
 *
 * Values are those of the JSON mapping (`docs/json.md`): 64-bit integers and timestamps are
 * numbers up to 2^53 - 1 and decimal strings beyond, identities and connection ids hex strings.
 */

import {
  WasmodClient,
  WasmodReplay,
  inflateFrame as wasmInflateFrame,
  setWebSocket as setWasmWebSocket,
  type Subscription as WasmSubscription,
} from "../wasm/wasmod_client_web.js";

/** A row as the JSON mapping writes it: an object keyed by column name. */
export type Row = Record<string, unknown>;

/**
 * The tables a client sees, as a map from table name to its row type: `Client<{ message:
 * Message }>` types `rows("message")` as `Message[]` and refuses `rows("mesage")`. The
 * default takes any table name and gives plain {@link Row}s.
 */
export type TableRows = { [table: string]: object };

/** The table names of `Tables`. */
export type TableName<Tables extends TableRows> = keyof Tables & string;

/** Where a connection stands. */
export type ConnectionState = "connected" | "reconnecting" | "disconnected";

/**
 * How the server may compress the large messages it sends: gzip (inflated by the platform), or none.
 * The package reads no brotli, which the protocol also offers: brotli's decoder was about a
 * third of the package's size, and at the levels the server uses gzip's frames are as small.
 */
export type Compression = "none" | "gzip";

/** A call's arguments: an array in parameter order, or an object keyed by parameter name. */
export type Args = readonly unknown[] | { readonly [parameter: string]: unknown };

/** Removes the callback it was returned for; calling it again does nothing. */
export type Unlisten = () => void;

/**
 * Gets a token for a connection: an OpenID Provider's ID token, renewed (silently, or by
 * signing in again) when asked again. It may return the token or a Promise of it; what it
 * throws or rejects with fails that connection attempt with its message.
 */
export type TokenProvider = () => string | Promise<string>;

/** How to connect. */
export interface ConnectOptions {
  /**
   * Who to connect as:
   *
   * - a string: the token of an identity handed out earlier ({@link Client.token}), or a token
   *   from an OpenID Provider the server accepts (`wasmod serve --oidc-issuer`);
   * - a {@link TokenProvider}, for tokens that expire (an OpenID Provider's ID tokens): the
   *   client calls it for the first connection, keeps its token for the reconnections, and
   *   calls it again when a server refuses that token as expired (`token_expired`), then
   *   connects with the new one at once;
   * - none: the server makes a new identity.
   */
  token?: string | TokenProvider | null;
  /** Ask the server to compress large messages; none by default. */
  compression?: Compression;
}

/**
 * What became of a query set that a new build of the module (`wasmod publish`) ended: the
 * server ends, at the swap, each set over a table whose columns or visibility filter
 * changed (`ended` is its message). The client subscribes such a set again by itself when
 * the new build sends its tables' rows as the client reads them (the same columns; the
 * client reads rows with the description it connected with):
 *
 * - `"resubscribed"`: the new build's rows are in the cache; only the rows that differ from
 *   what the set held ran their callbacks (a new visibility filter that hides a row: one
 *   delete), and updates go on.
 * - `"ended"`: it stays ended (`reason`: a table whose columns changed, so the app needs the
 *   new build's bindings and a new connection, or the new build refused the queries); its
 *   rows left the cache, with their delete callbacks.
 */
export type NewBuildEvent =
  | { kind: "resubscribed"; ended: string }
  | { kind: "ended"; ended: string; reason: string };

/** What to be told about a subscription. */
export interface SubscribeHandlers {
  /** Its rows are in the cache (their insert callbacks have run). */
  onApplied?: () => void;
  /** The server refused the queries (a message saying why), or dropped the query set. */
  onError?: (message: string) => void;
  /** A new build of the module ended the query set: what became of it (each time one does). */
  onNewBuild?: (event: NewBuildEvent) => void;
}

/** A WebSocket class: `new (url, protocol)` with the browser `WebSocket`'s members. */
export type WebSocketConstructor = new (url: string, protocol?: string | string[]) => unknown;

/** How the wasm is loaded where this runs; set once by the entry point. */
let loader: (() => Promise<void>) | undefined;
/** The loading under way or done. */
let loading: Promise<void> | undefined;
/** Whether the wasm is loaded (the synchronous constructors need it). */
let loaded = false;

/** Sets how {@link init} loads the wasm by default (the entry points call it). @internal */
export function setLoader(load: () => Promise<void>): void {
  loader = load;
}

/**
 * Loads the package's wasm, once; later calls return the same promise. `connect` calls it
 * itself: call it first only to construct a {@link Replay}, or to load the wasm from somewhere
 * else than where the entry point looks (`load`, a function doing it, for bundlers that
 * cannot follow the package's own reference to its `.wasm` file).
 */
export function init(load?: () => Promise<void>): Promise<void> {
  if (loading === undefined) {
    const chosen = load ?? loader;
    if (chosen === undefined) {
      return Promise.reject(new Error("@wasmod/client: no loader (import the package's entry point)"));
    }
    loading = chosen().then(() => {
      loaded = true;
    });
    // A failed load may be tried again.
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

function requireLoaded(what: string): void {
  if (!loaded) {
    throw new Error(`@wasmod/client: ${what} needs the wasm loaded: \`await init()\` first`);
  }
}

/**
 * Makes clients construct their sockets with `WebSocket` (a class with the browser
 * `WebSocket`'s constructor and members, such as the `ws` package's), or with the global
 * `WebSocket` again for `null`. The Node entry point does it by itself where Node has no
 * global `WebSocket`. Applies to every socket opened from then on, reconnections included.
 */
export async function setWebSocket(WebSocket: WebSocketConstructor | null): Promise<void> {
  await init();
  setWasmWebSocket((WebSocket ?? undefined) as Function | undefined);
}

/**
 * Calls `callback(...args)`, logging what it throws: one app callback's exception must not
 * keep the others from being called, nor reach the connection.
 */
function guarded(callback: Function, args: unknown[]): void {
  try {
    callback(...args);
  } catch (error) {
    console.error("a wasmod callback threw", error);
  }
}

/** One kind of row callback of one table, as the wasm calls it. */
type Kind = "insert" | "delete" | "update";

/** What the wasm client and the replay share: their tables and row callbacks. */
interface WasmTables {
  rows(table: string): unknown[];
  onInsert(table: string, callback: Function): void;
  onDelete(table: string, callback: Function): void;
  onUpdate(table: string, callback: Function): void;
}

/**
 * The row callbacks of one cache. The wasm cannot remove a callback, so it gets one per table
 * and kind, the first time one is asked for, that calls the app's current ones: removing one
 * is removing it from its set. Callbacks added while one runs see the next change, not this
 * one.
 */
class Listeners {
  private readonly sets = new Map<string, Set<Function>>();

  constructor(private readonly wasm: WasmTables) {}

  add(kind: Kind, table: string, callback: Function): Unlisten {
    const key = `${kind}\u0000${table}`;
    let set = this.sets.get(key);
    if (set === undefined) {
      const callbacks = new Set<Function>();
      const call = (...rows: unknown[]) => {
        for (const callback of [...callbacks]) {
          guarded(callback, rows);
        }
      };
      // Throws (and registers nothing) for a table the module does not have.
      if (kind === "insert") this.wasm.onInsert(table, call);
      else if (kind === "delete") this.wasm.onDelete(table, call);
      else this.wasm.onUpdate(table, call);
      set = callbacks;
      this.sets.set(key, set);
    }
    const callbacks = set;
    // One entry per registration, even of the same function twice.
    const entry = (...rows: unknown[]) => callback(...rows);
    callbacks.add(entry);
    return () => {
      callbacks.delete(entry);
    };
  }
}

/** The tables of a cache, typed: what {@link Client} and {@link Replay} share. */
abstract class Tables<T extends TableRows> {
  private readonly listeners: Listeners;

  protected constructor(private readonly tables: WasmTables) {
    this.listeners = new Listeners(tables);
  }

  /** The rows of `table` the cache holds now, in no particular order. */
  rows<K extends TableName<T>>(table: K): T[K][] {
    return this.tables.rows(table) as T[K][];
  }

  /** Calls `callback(row)` with each row of `table` that enters the cache. */
  onInsert<K extends TableName<T>>(table: K, callback: (row: T[K]) => void): Unlisten {
    return this.listeners.add("insert", table, callback);
  }

  /** Calls `callback(row)` with each row of `table` that leaves the cache. */
  onDelete<K extends TableName<T>>(table: K, callback: (row: T[K]) => void): Unlisten {
    return this.listeners.add("delete", table, callback);
  }

  /**
   * Calls `callback(old, row)` with each row of `table` replaced in one transaction by one with
   * the same primary key (a table without one sees a delete and an insert instead).
   */
  onUpdate<K extends TableName<T>>(table: K, callback: (old: T[K], row: T[K]) => void): Unlisten {
    return this.listeners.add("update", table, callback);
  }
}

/** A subscribed query set. */
export class Subscription {
  /** @internal */
  constructor(private wasm: WasmSubscription | undefined) {}

  /**
   * Whether the query set's rows last came resumed after a reconnection: the server sent only
   * what changed since the last commit the cache applied, rather than every row. False before
   * any reconnection, after one the server could not resume from, and once unsubscribed.
   */
  get resumed(): boolean {
    return this.wasm?.resumed ?? false;
  }

  /** Ends the query set: its rows leave the cache (with their delete callbacks). Idempotent. */
  unsubscribe(): void {
    const wasm = this.wasm;
    this.wasm = undefined;
    if (wasm !== undefined) {
      wasm.unsubscribe();
      wasm.free();
    }
  }
}

/**
 * A client of a wasmod server: one connection (reconnecting by itself, resuming its query
 * sets), a cache of the rows its subscriptions select, and calls. `T` maps table names to row
 * types (generated bindings supply it).
 */
export class Client<T extends TableRows = { [table: string]: Row }> extends Tables<T> {
  private readonly connectionListeners = new Set<(state: ConnectionState) => void>();
  /**
   * The connection's state as the wasm last reported it. The wasm client calls its state
   * callback with the client's state held (locked), so reading `connectionState` from the
   * wasm inside a state callback (as React's `useSyncExternalStore` does, synchronously, in
   * its listener) aborted the wasm ("unreachable"); kept here, it is read without calling in.
   */
  private state: ConnectionState;

  private constructor(private readonly wasm: WasmodClient) {
    super(wasm);
    this.state = wasm.connectionState as ConnectionState;
    wasm.onConnectionState((state: string) => {
      this.state = state as ConnectionState;
      for (const listener of [...this.connectionListeners]) {
        guarded(listener, [state]);
      }
    });
  }

  /**
   * Connects to the server at `url` (`http(s)://host:port`, `ws(s)://host:port`, or its
   * `/v1/subscribe`): reads the module's description, opens the socket and waits for the
   * server's greeting. Rejects if the first connection fails; later losses reconnect.
   *
   * Given an array, the URLs of a replicated deployment's servers (`docs/client-web.md`, "Several
   * servers"): it connects to the first that takes the connection (a standby refuses it with
   * close code 4004), and when that one refuses, fails or is lost, moves on to the next, round
   * robin, resuming its query sets on the new primary. A call a standby refused (`not_primary`:
   * it never ran) is sent to the next server; a call in flight when a connection drops rejects.
   */
  static async connect<T extends TableRows = { [table: string]: Row }>(
    url: string | readonly string[],
    options: ConnectOptions = {},
  ): Promise<Client<T>> {
    await init();
    const compression = options.compression === "none" ? undefined : options.compression;
    const { token } = options;
    const wasm =
      typeof token === "function"
        ? await WasmodClient.connect(url, undefined, compression, token)
        : await WasmodClient.connect(url, token ?? undefined, compression, undefined);
    return new Client<T>(wasm);
  }

  /**
   * The token of the client's identity: keep it to connect again as the same identity. (With a
   * token provider, the provider's last token.)
   */
  get token(): string {
    return this.wasm.token;
  }

  /** The client's identity, as 64 hex digits (as rows write identities). */
  get identity(): string {
    return this.wasm.identity;
  }

  /** Where the connection stands now. */
  get connectionState(): ConnectionState {
    return this.state;
  }

  /**
   * Calls `callback(state)` at each change of {@link connectionState}: the socket lost
   * (`"reconnecting"`), back (`"connected"`, its query sets resumed), or the client ended
   * (`"disconnected"`).
   */
  onConnectionState(callback: (state: ConnectionState) => void): Unlisten {
    const entry = (state: ConnectionState) => callback(state);
    this.connectionListeners.add(entry);
    return () => {
      this.connectionListeners.delete(entry);
    };
  }

  /**
   * Subscribes to the rows `queries` (SQL, `docs/subscriptions.md`) select, as one query set.
   * Its rows enter the cache with their insert callbacks, then `onApplied` runs. A new build
   * of the module that ends the set is followed as {@link NewBuildEvent} says
   * (`onNewBuild`).
   */
  subscribe(queries: readonly string[], handlers: SubscribeHandlers = {}): Subscription {
    return new Subscription(
      this.wasm.subscribe([...queries], handlers.onApplied, handlers.onError, handlers.onNewBuild),
    );
  }

  /**
   * Subscribes like {@link subscribe} and resolves once the rows are in the cache; rejects
   * with the server's refusal.
   */
  subscribed(queries: readonly string[]): Promise<Subscription> {
    return new Promise((resolve, reject) => {
      let applied = false;
      const subscription = this.subscribe(queries, {
        onApplied: () => {
          applied = true;
          resolve(subscription);
        },
        onError: (message) => {
          if (!applied) reject(new Error(message));
        },
      });
    });
  }

  /**
   * Calls reducer `name` with `args`; resolves with the commit's offset once its changes are
   * in the cache, rejects with the reducer's error.
   */
  callReducer(name: string, args: Args = []): Promise<number> {
    return this.wasm.callReducer(name, args) as Promise<number>;
  }

  /** Calls procedure `name` with `args`; resolves with the value it returns (JSON mapping). */
  callProcedure<R = unknown>(name: string, args: Args = []): Promise<R> {
    return this.wasm.callProcedure(name, args) as Promise<R>;
  }

  /** Calls view `name` with `args`; resolves with the value it returns (JSON mapping). */
  callView<R = unknown>(name: string, args: Args = []): Promise<R> {
    return this.wasm.callView(name, args) as Promise<R>;
  }

  /**
   * Resolves once the cache holds every change up to commit `offset` that this client's
   * subscriptions see, their callbacks run: read-your-writes for a write made elsewhere. An
   * HTTP call answers with its commit's `offset` (`{"offset": 41, "status": "committed"}`),
   * an HTTP handler with an `X-Wasmod-Offset` header. Resolves at once if an update at or past
   * `offset` was applied already; otherwise asks the server, which waits for that commit if
   * it has not happened yet. Rejects if the connection is lost first.
   *
   * ```ts
   * const answer = await fetch(`${base}/v1/reducers/send`, { method: "POST", body: '["hi"]', headers });
   * const { offset } = await answer.json();
   * await client.caughtUp(offset);
   * client.rows("message"); // includes "hi"
   * ```
   *
   * A procedure called through the client resolves only once its writes are in the cache.
   */
  async caughtUp(offset: number): Promise<void> {
    await this.wasm.caughtUp(offset);
  }

  /** Closes the connection for good; calls still waiting reject. */
  async disconnect(): Promise<void> {
    await this.wasm.disconnect();
  }
}

/**
 * `frame`, a binary server message as the server sends it, with a gzip message inflated into
 * an uncompressed frame of the same message (any other frame as it is), for a {@link Replay}:
 * the package inflates gzip with the platform's `DecompressionStream` (native code, and not
 * in the wasm, for its size), which is asynchronous, while `Replay.apply` is not. A connected
 * client does this itself. Rejects if the gzip member does not inflate.
 */
export async function inflateFrame(frame: Uint8Array): Promise<Uint8Array> {
  await init();
  return (await wasmInflateFrame(frame)) as Uint8Array;
}

/** A server message as the JSON protocol writes it (`docs/protocol.md`), e.g. `{ "TransactionUpdate": {..} }`. */
export type ServerMessage = { [kind: string]: unknown };

/**
 * A client cache fed frames by the app itself: recorded or relayed binary server messages
 * (the shared test vectors of `client/vectors/`), with the rows and callbacks of a
 * {@link Client}'s cache. Nothing is sent. Needs the wasm loaded: `await init()` first.
 */
export class Replay<T extends TableRows = { [table: string]: Row }> extends Tables<T> {
  private readonly wasm: WasmodReplay;

  /** An empty cache of the module `description` describes (the JSON text of `GET /v1/module`). */
  constructor(description: string) {
    requireLoaded("a Replay");
    const wasm = new WasmodReplay(description);
    super(wasm);
    this.wasm = wasm;
  }

  /**
   * Applies `frame`, one binary server message as the server sends it, uncompressed (a gzip
   * one through {@link inflateFrame} first; brotli is not read): its rows enter and leave the
   * cache, with their callbacks. Returns the message as the JSON protocol writes it; throws,
   * changing nothing, for bytes that are not a message, or are compressed.
   */
  apply(frame: Uint8Array): ServerMessage {
    return this.wasm.apply(frame) as ServerMessage;
  }

  /** Frees the cache's memory in the wasm; the replay is unusable after. */
  free(): void {
    this.wasm.free();
  }
}
