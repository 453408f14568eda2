/**
 * The listen address of `city daemon --http` and the `Host` headers it answers
 * (docs/status-page.md, "Security").
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import { isIP } from "node:net"
import * as HttpListen from "../../src/schema/HttpListen.ts"
import { anyText, holds, withAwkward } from "./strings.ts"

describe("HttpListen", () => {
  it("parses host:port, IPv6 in brackets, and names the rule a bad address breaks", () => {
    expect(HttpListen.parse("127.0.0.1:8765")).toEqual(Either.right({ host: "127.0.0.1", port: 8765 }))
    expect(HttpListen.parse("[::1]:0")).toEqual(Either.right({ host: "::1", port: 0 }))
    expect(HttpListen.parse("localhost:80")).toEqual(Either.right({ host: "localhost", port: 80 }))
    const rules: ReadonlyArray<readonly [string, string]> = [
      ["127.0.0.1", "must be host:port"],
      [":8080", "host must be an IP address or localhost"],
      ["example.com:80", "host must be an IP address or localhost"],
      ["256.0.0.1:80", "host must be an IP address or localhost"],
      ["[zz]:80", "host must be an IP address or localhost"],
      ["::1:80", "must be host:port"],
      ["127.0.0.1:65536", "port must be 0-65535"],
      ["127.0.0.1:80\n", "must be host:port"]
    ]
    for (const [text, rule] of rules) {
      const parsed = HttpListen.parse(text)
      expect([text, Either.isLeft(parsed) && parsed.left.includes(rule)]).toEqual([text, true])
    }
  })

  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) expect([host, HttpListen.isLoopback(host)]).toEqual([host, true])
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1"]) expect([host, HttpListen.isLoopback(host)]).toEqual([host, false])
  })

  it("answers only Host headers that name the server: never another name, never another port", () => {
    const loopback = HttpListen.allowHost("127.0.0.1", 8765)
    for (const ok of ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"]) expect([ok, loopback(ok)]).toEqual([ok, true])
    for (const bad of ["127.0.0.1:8766", "127.0.0.1", "evil.example:8765", "127.0.0.1.nip.io:8765", "", "10.0.0.1:8765", "[::1]"]) {
      expect([bad, loopback(bad)]).toEqual([bad, false])
    }
    const wildcard = HttpListen.allowHost("0.0.0.0", 80)
    for (const ok of ["192.168.1.20:80", "localhost:80", "[fe80::1]:80"]) expect([ok, wildcard(ok)]).toEqual([ok, true])
    for (const bad of ["city.example:80", "192.168.1.20:81"]) expect([bad, wildcard(bad)]).toEqual([bad, false])
    const exact = HttpListen.allowHost("192.168.1.20", 80)
    expect([exact("192.168.1.20:80"), exact("192.168.1.21:80"), exact("localhost:80")]).toEqual([true, false, false])
  })

  it("gives the page's URL, brackets for IPv6, loopback for a wildcard bind", () => {
    expect(HttpListen.url("127.0.0.1", 1)).toBe("http://127.0.0.1:1/")
    expect(HttpListen.url("::1", 2)).toBe("http://[::1]:2/")
    expect(HttpListen.url("0.0.0.0", 3)).toBe("http://127.0.0.1:3/")
    expect(HttpListen.url("::", 4)).toBe("http://[::1]:4/")
  })
})

describe("HttpListen, over addresses nobody chose", () => {
  const octet = FastCheck.oneof(FastCheck.integer({ min: 0, max: 999 }), FastCheck.constantFrom(0, 254, 255, 256))
  const ipv4 = FastCheck.tuple(octet, octet, octet, octet)
  const port = FastCheck.oneof(FastCheck.integer({ min: 0, max: 99_999 }), FastCheck.constantFrom(0, 65535, 65536))
  /** A DNS-like name: letters, digits, dots and dashes (what a rebinding attacker controls). */
  const dnsName = FastCheck.string({ unit: FastCheck.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789.-"), minLength: 1, maxLength: 40 })

  it("an IPv4 host:port is an address exactly when each part is at most 255 and the port at most 65535", () =>
    holds([ipv4, port], (parts, p) => {
      const parsed = HttpListen.parse(`${parts.join(".")}:${p}`)
      if (p > 65535) return expect(Either.isLeft(parsed) && parsed.left.startsWith("port must be 0-65535")).toBe(true)
      if (parts.some((part) => part > 255)) return expect(Either.isLeft(parsed) && parsed.left.startsWith("host must be")).toBe(true)
      expect(parsed).toEqual(Either.right({ host: parts.join("."), port: p }))
    }))

  // (Not every bracketed host accepted is an IPv6 address: `[.::1]:0` is, as `.::1`; only those
  // that are go through a URL and back.)
  it("any text is an address or a rule in words, never a throw; an address's URL parses back to it", () =>
    holds([FastCheck.oneof(anyText, withAwkward(FastCheck.constantFrom("127.0.0.1:80", "[::1]:0", "localhost:8080")))], (text) => {
      const parsed = HttpListen.parse(text)
      if (Either.isLeft(parsed)) return expect(parsed.left.length).toBeGreaterThan(0)
      const { host, port } = parsed.right
      if (host !== "localhost" && isIP(host) === 0) return
      const url = new URL(HttpListen.url(host, port))
      const back = HttpListen.parse(`${url.hostname}:${url.port === "" ? 80 : url.port}`)
      expect(back).toEqual(Either.right({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port === "" ? 80 : url.port) }))
    }))

  it("a name other than localhost is never answered, whatever the bind; nor a header without the bound port", () =>
    holds([dnsName, FastCheck.constantFrom("127.0.0.1", "::1", "0.0.0.0", "::", "192.168.1.20", "localhost"), port], (name, bind, p) => {
      const allow = HttpListen.allowHost(bind, p)
      const isIp = /^[0-9.]+$/.test(name)
      if (name !== "localhost" && !isIp) expect(allow(`${name}:${p}`)).toBe(false)
      expect(allow(`${bind.includes(":") ? `[${bind}]` : bind}:${p + 1}`)).toBe(false)
      expect(allow(bind)).toBe(false)
    }))
})
