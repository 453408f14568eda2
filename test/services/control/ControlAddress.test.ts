/**
 * Where the daemon's control socket goes (src/services/control/ControlAddress.ts; docs/cli.md,
 * "The daemon's control channel"): in the state folder when its path fits a socket address, else
 * in a folder of its own under the temp folder, keyed by the root.
 */
import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { maxSocketPath, place } from "../../../src/services/control/ControlAddress.ts"

describe("ControlAddress.place", () => {
  it("a root whose socket path fits: state/control.sock under it, no folder of its own", () => {
    expect(place("/srv/city", "/tmp")).toEqual({ path: "/srv/city/state/control.sock" })
  })

  it("a root too long for a socket address: a folder under the temp folder keyed by the root, the path within the limit", () => {
    const long = `/srv/${"r".repeat(100)}`
    const a = place(long, "/var/tmp")
    expect(a.folder).toMatch(/^\/var\/tmp\/city-control-[0-9a-f]{16}$/)
    expect(a.path).toBe(join(a.folder!, "control.sock"))
    expect(Buffer.byteLength(a.path)).toBeLessThanOrEqual(maxSocketPath)
    // The same root, the same place (a restart replaces its socket); another root, another place.
    expect(place(long, "/var/tmp")).toEqual(a)
    expect(place(`${long}x`, "/var/tmp").folder).not.toBe(a.folder)
  })

  it("the limit counts bytes, and a temp folder that is itself too long gives way to /tmp", () => {
    const wide = `/srv/${"é".repeat(45)}`
    expect(Buffer.byteLength(join(wide, "state/control.sock"))).toBeGreaterThan(maxSocketPath)
    expect(place(wide, "/tmp").folder).toMatch(/^\/tmp\/city-control-/)
    expect(place(`/srv/${"r".repeat(100)}`, `/${"t".repeat(100)}`).folder).toMatch(/^\/tmp\/city-control-/)
  })
})
