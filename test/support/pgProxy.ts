/**
 * A TCP proxy in front of the run's PostgreSQL server (test/support/postgres.ts), for the tests of
 * a fleet whose database stops answering (docs/cluster.md, "Faults"): what connects through it
 * seems to lose its server while the others keep theirs.
 */
import * as Effect from "effect/Effect"
import * as net from "node:net"

/** The proxy's handle. */
export interface PgProxy {
  /** Destroys every forwarded connection, both sides (the server seems gone, or the TCP connection cut). */
  readonly cut: Effect.Effect<void>
  /**
   * The local ports of its open connections to the server: their backends' `client_port` in
   * `pg_stat_activity`, which tells them apart from the connections that do not pass through it.
   */
  readonly serverPorts: Effect.Effect<ReadonlyArray<number>>
}

/**
 * A TCP proxy on `port` to the PostgreSQL server of `target`, in the test's scope. While `admit`
 * says no, a new connection is closed at once (the server seems gone); admitted ones are forwarded.
 */
export const pgProxy = (port: number, target: URL, admit: (n: number) => boolean) =>
  Effect.gen(function*() {
    let accepted = 0
    const open = new Set<net.Socket>()
    const upstreams = new Set<net.Socket>()
    const proxy = net.createServer((client) => {
      accepted++
      if (!admit(accepted)) return void client.destroy()
      const upstream = net.connect(Number(target.port === "" ? 5432 : target.port), target.hostname)
      open.add(client)
      open.add(upstream)
      upstreams.add(upstream)
      client.pipe(upstream).pipe(client)
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.on("close", () => void open.delete(client))
      upstream.on("close", () => {
        open.delete(upstream)
        upstreams.delete(upstream)
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void proxy.listen(port, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.sync(() => void proxy.close())
    )
    const handle: PgProxy = {
      cut: Effect.sync(() => {
        for (const socket of [...open]) socket.destroy()
      }),
      serverPorts: Effect.sync(() => [...upstreams].flatMap((socket) => socket.localPort === undefined ? [] : [socket.localPort]))
    }
    return handle
  })

/** The URL of `target` at `port` on this machine. */
export const viaPort = (target: URL, port: number) => {
  const url = new URL(target.href)
  url.hostname = "127.0.0.1"
  url.port = String(port)
  return url.href
}
