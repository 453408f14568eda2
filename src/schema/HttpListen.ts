/**
 * Where `city daemon --http` listens, and which `Host` headers name it (docs/status-page.md,
 * "Security"). An address is `host:port`: an IPv4 address, `localhost`, or an IPv6 address in
 * brackets (`[::1]:8080`); port 0 asks the system for a free one.
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * A listen address, as decoded.
 * @since 0.1.0
 * @category models
 */
export interface HttpListen {
  /** The host to bind, without brackets (`127.0.0.1`, `::1`, `localhost`, `0.0.0.0`). */
  readonly host: string
  readonly port: number
}

const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/
const isIpv4 = (host: string): boolean => {
  const m = ipv4.exec(host)
  return m !== null && m.slice(1).every((part) => Number(part) <= 255)
}
/** `host:port`, the host bracketed (group 1) or not (group 2), the port (group 3). */
const hostPort = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/

const isIpv6 = (host: string): boolean => /^[0-9a-fA-F:.]+$/.test(host) && host.includes(":")

/**
 * `host:port` decoded, or the rule it breaks, in words.
 * @since 0.1.0
 * @category utils
 */
export const parse = (text: string): Either.Either<HttpListen, string> => {
  const m = hostPort.exec(text)
  if (m === null) return Either.left(`must be host:port (an IPv6 host in brackets), got ${JSON.stringify(text)}`)
  const host = m[1] ?? m[2] ?? ""
  const port = Number(m[3])
  if (port > 65535) return Either.left(`port must be 0-65535, got ${port}`)
  if (m[1] !== undefined ? !isIpv6(host) : !(isIpv4(host) || host === "localhost")) {
    return Either.left(`host must be an IP address or localhost, got ${JSON.stringify(host)}`)
  }
  return Either.right({ host, port })
}

/**
 * `host:port` as a Schema (for `host.json`).
 * @since 0.1.0
 * @category schemas
 */
export const HttpListenAddress = Schema.String.pipe(
  Schema.filter((text) => Either.match(parse(text), { onLeft: (rule) => rule, onRight: () => true }))
)

/**
 * Whether the host is a loopback one: `localhost`, `127.0.0.0/8`, `::1`.
 * @since 0.1.0
 * @category guards
 */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIpv4(host) && host.startsWith("127."))

const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::"

/**
 * The `Host` headers a server bound to `bind` on `port` answers (DNS rebinding): the bound address
 * itself; for a loopback bind also `localhost`, `127.0.0.1` and `[::1]`; for a wildcard bind
 * (`0.0.0.0`, `::`) any IP address and `localhost`. Never a name other than `localhost`: a page
 * served from another name (an attacker's, rebound to this address) is refused. The port must be
 * the bound one; an absent port is refused too (browsers always send it for a port other than 80).
 * @since 0.1.0
 * @category guards
 */
export const allowHost = (bind: string, port: number) => (header: string): boolean => {
  const m = hostPort.exec(header.trim().toLowerCase())
  if (m === null || Number(m[3]) !== port) return false
  const host = m[1] ?? m[2] ?? ""
  if (host === bind.toLowerCase()) return true
  if (isLoopback(bind)) return host === "localhost" || host === "127.0.0.1" || host === "::1"
  if (isWildcard(bind)) return host === "localhost" || isIpv4(host) || (m[1] !== undefined && isIpv6(host))
  return false
}

/**
 * The address's URL (`http://127.0.0.1:8080/`, `http://[::1]:8080/`); for a wildcard bind, its
 * loopback address.
 * @since 0.1.0
 * @category utils
 */
export const url = (host: string, port: number): string =>
  `http://${host === "::" ? "[::1]" : host === "0.0.0.0" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host}:${port}/`
