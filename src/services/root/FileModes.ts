/**
 * The modes of what `city` writes under the state root: private to its owner (docs/cli.md, "Files
 * and permissions"). Set explicitly after creating, whatever the umask: a umask only removes bits,
 * and one such as 0277 would remove the owner's write bit. `StateRoot` writes every document and
 * makes every folder with them; the lifecycle log, the root lock's folder and a taken Turn request
 * use them too.
 * @since 0.1.0
 */

/**
 * The mode of every file `city` writes under the state root: only its owner reads and writes it.
 * @since 0.1.0
 * @category constants
 */
export const fileMode = 0o600

/**
 * The mode of every folder `city` makes (or writes into) under the state root.
 * @since 0.1.0
 * @category constants
 */
export const folderMode = 0o700
