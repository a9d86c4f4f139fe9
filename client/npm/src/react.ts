/**
 * React bindings of `@wasmod/client` (`@wasmod/client/react`): a provider that owns or is
 * given a connection, and hooks that read the client cache during render.
 *
 * Why `useSyncExternalStore`: the cache lives outside React and changes when the server's
 * messages arrive, between renders. Reading it with `useState` + callbacks can tear under
 * concurrent rendering (two components rendering different versions of a table in one pass);
 * `useSyncExternalStore` makes React re-read a snapshot and re-render synchronously when it
 * changed. A snapshot must be the same object until the table changes, so each table has a
 * {@link TableStore} that counts the changes its row callbacks see and reads the rows again
 * only when that count moved.
 *
 * Unsubscription: the row callbacks are registered when the first component showing a table
 * mounts and removed (through the `Unlisten`s the client returns) when the last one unmounts,
 * so a page that stops showing a table leaves no callback behind in the cache.
 *
 * The hooks are typed by the table map of the generated bindings (`Tables` of
 * `module_bindings.ts`): `useTable<Tables, "message">("message")` gives `Message[]`, and the
 * typed aliases of {@link bindHooks} save writing `Tables` at every call.
 *
 * React is an optional peer dependency of the package: only this entry imports it.
 */

import {
  createContext,
  createElement,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from "react";
import {
  Client,
  type Compression,
  type ConnectOptions,
  type ConnectionState,
  type Row,
  type SubscribeHandlers,
  type Subscription,
  type TableName,
  type TableRows,
  type TokenProvider,
  type Unlisten,
} from "./client.js";

/** The default table map: any table name, plain rows. */
type AnyTables = { [table: string]: Row };

/**
 * What the hooks read tables from: a {@link Client}'s cache, or a `Replay`'s (fed frames by
 * the app or a test, with no socket).
 */
export interface Cache<T extends TableRows = AnyTables> {
  rows<K extends TableName<T>>(table: K): T[K][];
  onInsert<K extends TableName<T>>(table: K, callback: (row: T[K]) => void): Unlisten;
  onDelete<K extends TableName<T>>(table: K, callback: (row: T[K]) => void): Unlisten;
  onUpdate<K extends TableName<T>>(table: K, callback: (old: T[K], row: T[K]) => void): Unlisten;
}

/**
 * Where the provider's connection stands: `"connecting"` until the first connection is made
 * (a provider given a `url`), `"failed"` if it could not be (see {@link Connection.error}),
 * then the client's own {@link ConnectionState}.
 */
export type Status = "connecting" | "failed" | ConnectionState;

/** What {@link useConnection} returns. */
export interface Connection<T extends TableRows = AnyTables> {
  /** The connected client; undefined while connecting, after a failure, and over a `Replay`. */
  readonly client: Client<T> | undefined;
  /** Where the connection stands; re-renders the component when it changes. */
  readonly status: Status;
  /** Why the first connection failed (`status` is `"failed"`). */
  readonly error: Error | undefined;
}

/**
 * The rows of one table of one cache as a React external store: one set of row callbacks
 * however many components show the table, registered while at least one does.
 */
class TableStore<T extends TableRows, K extends TableName<T>> {
  private readonly listeners = new Set<() => void>();
  private unlisten: Unlisten[] = [];
  private snapshot: T[K][] | undefined;
  /** Whether the cache may have changed since {@link snapshot} was read. */
  private stale = true;

  constructor(
    private readonly cache: Cache<T>,
    private readonly table: K,
  ) {}

  /** React's `subscribe`: `onChange` is called after each change of the table. */
  readonly subscribe = (onChange: () => void): (() => void) => {
    if (this.listeners.size === 0) this.listen();
    this.listeners.add(onChange);
    return () => {
      this.listeners.delete(onChange);
      if (this.listeners.size === 0) {
        for (const unlisten of this.unlisten.splice(0)) unlisten();
      }
    };
  };

  /** React's `getSnapshot`: the table's rows, the same array until the table changes. */
  readonly getSnapshot = (): T[K][] => {
    if (this.stale || this.snapshot === undefined) {
      // Unwatched (a first render before its effects subscribe), the snapshot may go stale:
      // subscribing reads the table again, and React renders again if it changed.
      this.snapshot = this.cache.rows(this.table);
      this.stale = false;
    }
    return this.snapshot;
  };

  private listen(): void {
    // What changed while nobody listened is unknown: read again, but keep the old array if
    // the rows are the same, so that mounting does not re-render for nothing.
    const before = this.snapshot;
    const changed = () => {
      this.stale = true;
      for (const listener of [...this.listeners]) listener();
    };
    this.unlisten = [
      this.cache.onInsert(this.table, changed),
      this.cache.onDelete(this.table, changed),
      this.cache.onUpdate(this.table, changed),
    ];
    const now = this.cache.rows(this.table);
    this.snapshot = before !== undefined && sameRows(before, now) ? before : now;
    this.stale = false;
  }
}

/** Whether two readings of a table hold the same rows (rows are JSON-mapping values). */
function sameRows(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}

/** The stores of each cache, by table: shared by every component of every provider over it. */
const stores = new WeakMap<object, Map<string, TableStore<TableRows, string>>>();

function storeOf<T extends TableRows, K extends TableName<T>>(cache: Cache<T>, table: K): TableStore<T, K> {
  let tables = stores.get(cache);
  if (tables === undefined) {
    tables = new Map();
    stores.set(cache, tables);
  }
  let store = tables.get(table);
  if (store === undefined) {
    // Throws for a table the module does not have (the cache refuses it), at the first render.
    (cache as Cache<TableRows>).rows(table);
    store = new TableStore(cache as Cache<TableRows>, table);
    tables.set(table, store);
  }
  return store as unknown as TableStore<T, K>;
}

/** What the provider puts in context. */
interface Context {
  cache: Cache<TableRows> | undefined;
  connection: Connection<TableRows>;
}

const WasmodContext = createContext<Context | undefined>(undefined);

/** The props of {@link WasmodProvider}: a client (or cache) it is given, or where to connect. */
export type WasmodProviderProps<T extends TableRows = AnyTables> = {
  children?: ReactNode;
} & (
  | {
      /**
       * A client connected by the app (or a `Replay`): the provider does not disconnect it on
       * unmount. TypeScript cannot infer `T` through the cache's generic methods: give it,
       * `<WasmodProvider<Tables> client={…}>`.
       */
      client: Cache<T>;
      url?: undefined;
    }
  | {
      client?: undefined;
      /** The server to connect to (`http(s)://host:port`); the provider disconnects on unmount. */
      url: string;
      /**
       * Who to connect as ({@link ConnectOptions.token}): the token of an identity handed out
       * earlier (e.g. kept in `localStorage`), an OpenID Provider's token, or a
       * {@link TokenProvider} that the client calls for the first connection and again when a
       * server refuses its token as expired. A different value connects again (signing in or
       * out): keep a provider the same function between renders (`useCallback`, or defined
       * outside the component), or each render reconnects.
       */
      token?: string | TokenProvider | null;
      compression?: Compression;
      /** Called once connected, e.g. to keep `client.token` for the next visit. */
      onConnect?: (client: Client<T>) => void;
    }
);

/**
 * Makes a connection available to the components under it. Given a `url`, it connects once
 * when mounted (a new `url`, `token` or token provider connects again) and disconnects when
 * unmounted; its children render from the start and see `status: "connecting"` until then.
 * Given a `client` (or a `Replay`), it uses it as it is.
 */
export function WasmodProvider<T extends TableRows = AnyTables>(props: WasmodProviderProps<T>): ReactNode {
  const given = props.client;
  const [connected, setConnected] = useState<{ client?: Client<T>; error?: Error }>({});
  const onConnect = useRef(props.url === undefined ? undefined : props.onConnect);
  onConnect.current = props.url === undefined ? undefined : props.onConnect;

  const url = props.url;
  const token = props.url === undefined ? undefined : props.token;
  const compression = props.url === undefined ? undefined : props.compression;
  useEffect(() => {
    if (url === undefined) return;
    // React may unmount (or, in StrictMode, re-run) the effect before the connection is made:
    // a connection made for an effect already cleaned up is closed at once.
    let live = true;
    let client: Client<T> | undefined;
    setConnected({});
    // Connect from a microtask, not from the effect itself: StrictMode (in development)
    // mounts, unmounts and mounts again in one go, and a connection without a token begun by
    // the first mount would have the server hand out an identity nobody keeps (the React
    // quickstart's browser test saw one per page).
    const connect = async () => {
      await Promise.resolve();
      if (!live) return;
      let made: Client<T>;
      try {
        made = await Client.connect<T>(url, { token, compression });
      } catch (error) {
        if (live) setConnected({ error: error instanceof Error ? error : new Error(String(error)) });
        return;
      }
      if (!live) {
        void made.disconnect();
        return;
      }
      client = made;
      setConnected({ client: made });
      try {
        onConnect.current?.(made);
      } catch (error) {
        console.error("WasmodProvider's onConnect threw", error);
      }
    };
    void connect();
    return () => {
      live = false;
      void client?.disconnect();
    };
  }, [url, token, compression]);

  const client = given instanceof Client ? given : connected.client;
  const state = useConnectionState(client);
  const cache = (given ?? connected.client) as Cache<T> | undefined;
  const status: Status = client !== undefined ? state! : given !== undefined ? "connected" : connected.error ? "failed" : "connecting";
  const error = given === undefined ? connected.error : undefined;

  const value = useMemo<Context>(
    () => ({
      cache: cache as Cache<TableRows> | undefined,
      connection: { client: client as Client<TableRows> | undefined, status, error },
    }),
    [cache, client, status, error],
  );
  return createElement(WasmodContext.Provider, { value }, props.children);
}

/** A `subscribe` for no store: nothing to listen to. */
const noStore = () => () => {};

/** The client's connection state, re-rendering on its changes; undefined without a client. */
function useConnectionState<T extends TableRows>(client: Client<T> | undefined): ConnectionState | undefined {
  const subscribe = useCallback(
    (onChange: () => void) => (client === undefined ? () => {} : client.onConnectionState(onChange)),
    [client],
  );
  const read = () => client?.connectionState;
  return useSyncExternalStore(subscribe, read, read);
}

function useWasmodContext(hook: string): Context {
  const context = useContext(WasmodContext);
  if (context === undefined) {
    throw new Error(`@wasmod/client/react: ${hook} needs a <WasmodProvider> above it`);
  }
  return context;
}

/**
 * The provider's connection: the client once connected, and its status (`"connecting"`,
 * `"connected"`, `"reconnecting"`, `"disconnected"`, `"failed"`), re-rendering on changes.
 */
export function useConnection<T extends TableRows = AnyTables>(): Connection<T> {
  return useWasmodContext("useConnection").connection as Connection<T>;
}

/**
 * The rows of `table` in the cache, re-rendering when rows of it enter, leave or change; those
 * `filter` keeps if given. Empty while the provider is still connecting. The rows are those
 * the client's subscriptions select ({@link useSubscription}), in no particular order. The
 * same array comes back until the table changes; an inline `filter` filters again at each
 * render (wrap it in `useCallback` for a large table).
 */
export function useTable<T extends TableRows = AnyTables, K extends TableName<T> = TableName<T>>(
  table: K,
  filter?: (row: T[K]) => boolean,
): T[K][] {
  const cache = useWasmodContext("useTable").cache as Cache<T> | undefined;
  const store = cache === undefined ? undefined : storeOf(cache, table);
  const rows = useSyncExternalStore(
    store?.subscribe ?? noStore,
    store?.getSnapshot ?? emptyRows,
    store?.getSnapshot ?? emptyRows,
  ) as T[K][];
  return useMemo(() => (filter === undefined ? rows : rows.filter(filter)), [rows, filter]);
}

const none: never[] = [];
const emptyRows = () => none;

/** What {@link useSubscription} returns. */
export interface SubscriptionState {
  /** Whether the query set's rows are in the cache. */
  readonly applied: boolean;
  /** The server's refusal of the queries, if it refused them, or why a new build ended them. */
  readonly error: string | undefined;
}

/**
 * Subscribes the provider's client to `queries` (SQL) while the component is mounted (and
 * connected); unsubscribes (its rows leave the cache) when it unmounts or `queries` change.
 * A new build of the module that ends the query set for good (`onNewBuild`'s `"ended"`)
 * makes it not applied, with the reason as its error.
 */
export function useSubscription(queries: readonly string[], handlers: SubscribeHandlers = {}): SubscriptionState {
  const { client } = useConnection();
  const [state, setState] = useState<{ key: string; applied: boolean; error?: string }>({ key: "", applied: false });
  const latest = useRef(handlers);
  latest.current = handlers;
  // The queries by value: a new array of the same queries is the same subscription.
  const key = JSON.stringify(queries);
  useEffect(() => {
    if (client === undefined) return;
    let live = true;
    let subscription: Subscription | undefined;
    subscription = client.subscribe(JSON.parse(key) as string[], {
      onApplied: () => {
        if (live) setState({ key, applied: true });
        latest.current.onApplied?.();
      },
      onError: (message) => {
        if (live) setState({ key, applied: false, error: message });
        latest.current.onError?.(message);
      },
      onNewBuild: (event) => {
        if (live && event.kind === "ended") setState({ key, applied: false, error: event.reason });
        latest.current.onNewBuild?.(event);
      },
    });
    return () => {
      live = false;
      subscription?.unsubscribe();
      subscription = undefined;
    };
  }, [client, key]);
  // State from the previous queries does not describe these.
  return state.key === key ? { applied: state.applied, error: state.error } : { applied: false, error: undefined };
}

/** What {@link useCall} returns beside the call. */
export interface CallState {
  /** How many of the component's calls have not settled. */
  readonly pending: number;
  /** Why the last settled call failed; cleared by a call that succeeds. */
  readonly error: Error | undefined;
}

/**
 * Wraps an asynchronous call (a reducer of the generated bindings, e.g. `(text: string) =>
 * db.reducers.send({ text })`) with the state a form shows: how many are pending and the last
 * error. The returned function keeps its identity across renders (it calls the latest `call`),
 * resolves with the call's result, or with `undefined` if it failed (never rejects: the error
 * is in the state), and sets no state once the component is unmounted.
 */
export function useCall<A extends unknown[], R>(
  call: (...args: A) => Promise<R>,
): [(...args: A) => Promise<R | undefined>, CallState] {
  const [state, setState] = useState<CallState>({ pending: 0, error: undefined });
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const latest = useRef(call);
  latest.current = call;
  const wrapped = useCallback(async (...args: A): Promise<R | undefined> => {
    setState((s) => ({ ...s, pending: s.pending + 1 }));
    try {
      const result = await latest.current(...args);
      if (mounted.current) setState((s) => ({ pending: s.pending - 1, error: undefined }));
      return result;
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      if (mounted.current) setState((s) => ({ pending: s.pending - 1, error: failure }));
      return undefined;
    }
  }, []);
  return [wrapped, state];
}

/**
 * The hooks typed for one module's table map, so that components need not name it:
 * `export const { useTable, useConnection } = bindHooks<Tables>();` in the app, then
 * `useTable("message")` is `Message[]` and `useTable("mesage")` a type error.
 */
export function bindHooks<T extends TableRows>(): {
  useTable: <K extends TableName<T>>(table: K, filter?: (row: T[K]) => boolean) => T[K][];
  useConnection: () => Connection<T>;
} {
  return {
    useTable: <K extends TableName<T>>(table: K, filter?: (row: T[K]) => boolean) => useTable<T, K>(table, filter),
    useConnection: () => useConnection<T>(),
  };
}
