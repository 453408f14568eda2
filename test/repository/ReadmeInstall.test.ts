/**
 * The README's install line installs what the package runs on (README.md, "The library"): each
 * package it names at the version `package.json` gives it (a peer's range, or for the test kit the
 * range this repository tests with), and every peer that is not optional named.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"

const repo = join(import.meta.dirname, "../..")
const readme = readFileSync(join(repo, "README.md"), "utf8")
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly devDependencies: Record<string, string>
  readonly engines: { readonly node: string }
  readonly scripts: Record<string, string>
}

describe("the README's install line", () => {
  it("names every required peer and the test kit, each at the version package.json gives it", () => {
    const library = readme.slice(readme.indexOf("## The library"))
    const line = library.split("\n").find((l) => l.startsWith("npm install effect-city")) ?? ""
    const named = new Map([...line.matchAll(/(@?[a-z0-9@/.-]+?)@([~^]?\d[^\s]*)/g)].map((m) => [m[1]!, m[2]!] as const))
    const required = Object.keys(pkg.peerDependencies).filter((p) => pkg.peerDependenciesMeta?.[p]?.optional !== true)
    expect([...named.keys()].filter((p) => pkg.peerDependencies[p] !== undefined).sort()).toEqual(required.sort())
    for (const [name, range] of named) expect(range, name).toBe(pkg.peerDependencies[name] ?? pkg.devDependencies[name])
    expect(named.get("@effect/vitest")).toBe(pkg.devDependencies["@effect/vitest"])
    expect(named.get("vitest")).toBe(pkg.devDependencies["vitest"])
    expect(readme).toContain("## Set-up of this repository")
  })

  it("names @types/ws for a project that checks its dependencies' declarations, at the version package.json gives it", () => {
    // scripts/pack-check.mjs compiles the shipped examples so (skipLibCheck off, with @types/ws).
    expect(/npm install -D @types\/ws@(\S+?)`/.exec(readme)?.[1]).toBe(pkg.devDependencies["@types/ws"])
  })

  it("engines names the Node lines that are tested, and no other: this machine's and the one CI adds", () => {
    const lines = pkg.engines.node.split("||").map((range) => /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(range)?.[1])
    const extra = /node scripts\/node-line\.mjs (\d+)$/.exec(pkg.scripts["test:node24"] ?? "")?.[1]
    expect(lines.sort()).toEqual([process.versions.node.split(".")[0], extra].sort())
    expect(readFileSync(join(repo, ".ci", "run"), "utf8")).toMatch(/^npm run test:node24$/m)
  })

  it("the README stays an opening, at most 12 KB: reference material lives in docs/", () => {
    expect(Buffer.byteLength(readme, "utf8")).toBeLessThanOrEqual(12 * 1024)
  })
})
