/**
 * The mode checks of the in-memory store (../MemoryFileSystem.ts has the decisions): the owner's
 * bits are checked as a non-root user's are; root, who ignores them on a disk, is not modelled.
 * @since 0.1.0
 */
import type { Node } from "./memoryTree.ts"

/**
 * The read bit of a mode's owner triple.
 * @since 0.1.0
 * @category constants
 */
export const R = 4
/**
 * The write bit of a mode's owner triple.
 * @since 0.1.0
 * @category constants
 */
export const W = 2
/**
 * The search (execute) bit of a mode's owner triple.
 * @since 0.1.0
 * @category constants
 */
export const X = 1

/**
 * Whether the owner's bits of `node` hold `bit`: the store is used as its files' owner, never as
 * root (who ignores them).
 * @since 0.1.0
 * @category guards
 */
export const can = (node: Node, bit: number) => ((node.mode >> 6) & bit) !== 0
