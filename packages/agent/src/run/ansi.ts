/**
 * ANSI styling that can be switched off: plain output (stdout not a TTY, or `NO_COLOR`) gets the same text with no
 * escape codes, so scripts and logs see clean lines.
 */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
  gray(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => (text ? `\x1b[${open}m${text}\x1b[${close}m` : text);

const ON: Style = {
  enabled: true,
  bold: wrap(1, 22),
  dim: wrap(2, 22),
  italic: wrap(3, 23),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  blue: wrap(34, 39),
  magenta: wrap(35, 39),
  cyan: wrap(36, 39),
  gray: wrap(90, 39),
};

const same = (text: string) => text;
const OFF: Style = {
  enabled: false,
  bold: same,
  dim: same,
  italic: same,
  red: same,
  green: same,
  yellow: same,
  blue: same,
  magenta: same,
  cyan: same,
  gray: same,
};

export function style(enabled: boolean): Style {
  return enabled ? ON : OFF;
}

/** Erases from the cursor to the end of the line. */
export const ERASE_LINE_END = "\x1b[K";
