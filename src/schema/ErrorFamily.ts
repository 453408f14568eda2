/**
 * What the library's error families share (docs/cli.md, "Error tags and the library's error
 * families"): each is one class per operation that failed, with a `reason` literal, as the
 * platform's `SystemError` is; its `name` is the reason, the tag that failure had before the
 * family, so its stack, `Cause.pretty`, the logs and the CLI's `--json` print it as before.
 * @since 0.1.0
 */

/**
 * Marks a family's error: a getter of its prototype, so it is not one of the error's fields.
 * @since 0.1.0
 * @category symbols
 */
export const FamilyTypeId: unique symbol = Symbol.for("effect-city/ErrorFamily")

/**
 * Marks a family's error.
 * @since 0.1.0
 * @category symbols
 */
export type FamilyTypeId = typeof FamilyTypeId

/**
 * The tag an error is printed by: a family's error by its `name` (its reason), any other value
 * with a string `_tag` by that tag; `undefined` for a value without one.
 * @since 0.1.0
 * @category utils
 */
export const printedTag = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  if (FamilyTypeId in error && error instanceof Error) return error.name
  const tag: unknown = Reflect.get(error, "_tag")
  return typeof tag === "string" ? tag : undefined
}
