/**
 * The types of `status.mjs` (the page's script, plain JavaScript served as it is), as the server
 * and the tests use it.
 * @since 0.1.0
 */
import type { SkippedPlugin } from "../../../schema/LoadReport.ts"
import type {
  StatusDocument,
  StatusEndpoint,
  StatusEvent,
  StatusFleetHost,
  StatusPlugin
} from "../../../schema/StatusDocument.ts"

/** A node of a section: a tag, its attributes, its children (trees or text). */
export interface Tree {
  readonly tag: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: ReadonlyArray<Tree | string>
}

/** How a cell shows its value; also the cell's class. */
export type CellKind = "text" | "code" | "number" | "bytes" | "time" | "pre" | "badge" | "last" | "owed" | "updown"

/** One column of a table. */
export interface Column<F extends string> {
  readonly title: string
  /** The row's field it shows; for a badge, also the badge's class prefix (`status-ready`). */
  readonly field: F
  readonly kind: CellKind
}

/** The containers of the page, each filled with one section. */
export type Container =
  | "summary"
  | "plugins"
  | "skipped"
  | "missing"
  | "endpoints"
  | "log"
  | "fleet"
  | "fleet-about"
  | "fleet-invalid"

/** The newest log entries a page shows. */
export declare const logLimit: number

/** Every event the script listens to. */
export declare const tags: ReadonlyArray<StatusEvent["_tag"]>

/** The tables' columns. */
export declare const columns: {
  readonly plugins: ReadonlyArray<Column<keyof StatusPlugin>>
  readonly skipped: ReadonlyArray<Column<keyof SkippedPlugin>>
  readonly endpoints: ReadonlyArray<Column<keyof StatusEndpoint>>
  readonly fleet: ReadonlyArray<Column<keyof StatusFleetHost>>
}

/** The trees of every container for one document. */
export declare function sections(doc: StatusDocument): Readonly<Record<Container, ReadonlyArray<Tree>>>

/** Runs the page in `window` (`window.cityStatus`, and the connection when there is an `EventSource`). */
export declare function start(window: object, document: unknown, EventSource: unknown): void
