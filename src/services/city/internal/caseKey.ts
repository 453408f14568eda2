/**
 * The key under which the City holds a plugin name against its other cases (the plugin-name rule,
 * the `PluginName` module: names that differ only in case would be one folder on a
 * case-insensitive file system).
 * @since 0.1.0
 */

/**
 * The key two names share when they differ only in case: the name in lower case (names are ASCII,
 * so this is the folding of every case-insensitive file system).
 * @since 0.1.0
 * @category internals
 */
export const caseKey = (name: string): string => name.toLowerCase()
