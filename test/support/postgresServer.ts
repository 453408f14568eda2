/**
 * A throwaway PostgreSQL server (docs/cluster.md, "Tests on PostgreSQL"), on loopback, in a fresh
 * temp folder, from Debian's `postgresql` package (`initdb` and `pg_ctl` on PATH, else in the
 * highest `/usr/lib/postgresql/<major>/bin`). The tests' global setup (test/support/postgres.ts)
 * starts one for the whole run; the benchmark of the fleet (bench/cluster.bench.ts) starts its own.
 *
 * Decisions:
 * - a server that cannot be started FAILS the run with a one-line reason: a test on PostgreSQL is
 *   never skipped (.ci/run installs the package where it is missing);
 * - `fsync=off` (and `initdb --no-sync`): the tests kill our processes, never the server, and a
 *   throwaway cluster needs no durability against a power cut;
 * - `max_connections=200`: test files run two at a time, each with pools of its own;
 * - trust authentication, superuser `city`, TCP on 127.0.0.1 only and the Unix socket in the temp
 *   folder (never the system's /var/run/postgresql);
 * - `initdb` and `pg_ctl` refuse to run as root: as uid 0 they run as the package's `postgres`
 *   user, which then owns the temp folder;
 * - the port is a free one the system hands out; should another process take it before the
 *   server binds it, the start is tried again on another (three attempts).
 */
import { execFile } from "node:child_process"
import { access, chown, mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { freePortNow as freePort } from "./freePort.ts"

/** Thrown with a one-line reason; vitest fails the run with it. */
export class PostgresUnavailable extends Error {
  constructor(reason: string) {
    super(`the tests' PostgreSQL server could not be started: ${reason.replace(/\s+/g, " ").trim()}`)
    this.name = "PostgresUnavailable"
    this.stack = `${this.name}: ${this.message}` // the reason is the report: no frames of this file
  }
}

/** The folder that holds both `initdb` and `pg_ctl`: PATH first, else the highest Debian major. */
const findBinaries = async (): Promise<string> => {
  const usable = async (dir: string) => {
    const names = await readdir(dir).catch(() => [] as Array<string>)
    return names.includes("initdb") && names.includes("pg_ctl")
  }
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    // Through a symlink (/usr/local/bin/pg_ctl here): the package's folder, where pg_isready is too.
    if (dir !== "" && await usable(dir)) return dirname(await realpath(join(dir, "pg_ctl")))
  }
  const majors = (await readdir("/usr/lib/postgresql").catch(() => [] as Array<string>))
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
  for (const major of majors) {
    const dir = `/usr/lib/postgresql/${major}/bin`
    if (await usable(dir)) return dir
  }
  throw new PostgresUnavailable(
    "initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/<major>/bin (install Debian's postgresql package, as .ci/run does)"
  )
}

interface Owner {
  readonly uid: number
  readonly gid: number
}

const run = (file: string, args: ReadonlyArray<string>, owner: Owner | undefined, cwd: string) =>
  new Promise<{ readonly ok: boolean; readonly output: string }>((resolve) => {
    execFile(file, args, { cwd, ...owner, env: { ...process.env, LC_ALL: "C" } }, (error, stdout, stderr) =>
      resolve({ ok: error === null, output: `${stderr}\n${stdout}\n${error?.message ?? ""}` }))
  })

/** The last non-empty line of a command's output or log: the reason, in one line. */
const lastLine = (text: string) => text.split("\n").map((l) => l.trim()).filter((l) => l !== "").at(-1) ?? "(no output)"

/** As root, the `postgres` user of the package (initdb and pg_ctl refuse uid 0); else ourselves. */
const serverOwner = async (): Promise<Owner | undefined> => {
  if (process.getuid?.() !== 0) return undefined
  const id = async (flag: string) => {
    const result = await run("id", [flag, "postgres"], undefined, "/")
    const value = Number(result.output.trim().split("\n")[0])
    if (!result.ok || !Number.isInteger(value)) {
      throw new PostgresUnavailable("running as root and there is no `postgres` user to run initdb and pg_ctl as (Debian's postgresql package creates it)")
    }
    return value
  }
  return { uid: await id("-u"), gid: await id("-g") }
}

/** A running throwaway server: its URL (superuser `city`, database `postgres`) and its stop. */
export interface PostgresServer {
  readonly url: string
  /**
   * Restarts the server as a crash would (`pg_ctl restart -m immediate`: every connection cut, the
   * server recovers from its log), on the same port and options; resolves once it accepts
   * connections again (the chaos test, test/chaos/).
   */
  readonly restart: () => Promise<void>
  /** Stops the server and removes its folder. */
  readonly stop: () => Promise<void>
}

/**
 * Starts the server; `PostgresUnavailable` (one line) when it cannot. `stop` stops it and removes
 * its folder.
 */
export const startPostgres = async (): Promise<PostgresServer> => {
  try {
    return await start()
  } catch (error) {
    throw error instanceof PostgresUnavailable ? error : new PostgresUnavailable(error instanceof Error ? error.message : String(error))
  }
}

const start = async (): Promise<PostgresServer> => {
  const bin = await findBinaries()
  const owner = await serverOwner()
  const folder = await mkdtemp(join(tmpdir(), "city-pg-"))
  const data = join(folder, "data")
  const log = join(folder, "server.log")
  const remove = () => rm(folder, { recursive: true, force: true })
  try {
    if (owner !== undefined) await chown(folder, owner.uid, owner.gid)
    const init = await run(join(bin, "initdb"), ["-D", data, "-U", "city", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], owner, folder)
    if (!init.ok) throw new PostgresUnavailable(`initdb failed: ${lastLine(init.output)}`)
    let started: { readonly port: number; readonly stop: () => Promise<void> } | undefined
    let reason = ""
    for (let attempt = 0; attempt < 3 && started === undefined; attempt++) {
      const port = await freePort()
      const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${folder} -c fsync=off -c max_connections=200`
      const start = await run(join(bin, "pg_ctl"), ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", options], owner, folder)
      if (start.ok) {
        started = { port, stop: async () => void await run(join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "immediate", "-w"], owner, folder) }
      } else {
        reason = `pg_ctl start failed: ${lastLine(await readFile(log, "utf8").catch(() => start.output))}`
        await run(join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "immediate", "-w"], owner, folder)
      }
    }
    if (started === undefined) throw new PostgresUnavailable(reason)
    const { port, stop } = started
    // pg_ctl -w returns once the server says it is ready; pg_isready (where the package has it)
    // asks over TCP, as the tests will.
    const isready = join(bin, "pg_isready")
    const ready = await access(isready).then(
      () => run(isready, ["-h", "127.0.0.1", "-p", String(port), "-U", "city", "-d", "postgres"], owner, folder),
      () => ({ ok: true, output: "" })
    )
    if (!ready.ok) {
      await stop()
      throw new PostgresUnavailable(`the server started but does not accept connections on 127.0.0.1:${port}: ${lastLine(ready.output)}`)
    }
    return {
      url: `postgres://city@127.0.0.1:${port}/postgres`,
      restart: async () => {
        // pg_ctl restart starts the server again with the options of the last start (postmaster.opts).
        const restarted = await run(join(bin, "pg_ctl"), ["restart", "-D", data, "-l", log, "-m", "immediate", "-w", "-t", "60"], owner, folder)
        if (!restarted.ok) throw new Error(`pg_ctl restart failed: ${lastLine(await readFile(log, "utf8").catch(() => restarted.output))}`)
      },
      stop: async () => {
        await stop()
        await remove()
      }
    }
  } catch (error) {
    await remove()
    throw error
  }
}
