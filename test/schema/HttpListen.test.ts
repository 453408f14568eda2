/**
 * The listen address of `city daemon --http` and the `Host` headers it answers
 * (docs/status-page.md, "Security").
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as HttpListen from "../../src/schema/HttpListen.ts"

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
