/**
 * Before any test: ONE PostgreSQL server for the whole run (docs/cluster.md, "Tests on
 * PostgreSQL"), started by test/support/postgresServer.ts (its decisions are there). Its URL
 * reaches the tests through `inject("postgresUrl")`; a test file takes a database of its own from
 * it (test/support/pgDatabase.ts). Teardown stops the server and removes its folder. A server that
 * cannot be started FAILS the run with a one-line reason.
 */
import type { TestProject } from "vitest/node"
import { startPostgres } from "./postgresServer.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The URL of the run's PostgreSQL server (superuser `city`, database `postgres`). */
    readonly postgresUrl: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres()
  project.provide("postgresUrl", server.url)
  return server.stop
}
