/**
 * A TCP port free on 127.0.0.1 now (the system picks it for a listener that is closed at once):
 * a runner's address in the cluster tests, the tests' PostgreSQL server, the fleet benchmark.
 */
import * as Effect from "effect/Effect"
import { createServer } from "node:net"

/** The port, as a Promise (for code outside Effect: a global setup, a benchmark). */
export const freePortNow = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
    })
  })

/** The port, as an Effect. */
export const freePort = Effect.promise(freePortNow)
