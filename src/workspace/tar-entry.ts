/**
 * Tar entry headers as bytes (POSIX ustar, with a pax record for a path or link target longer
 * than ustar holds). Pure: the snapshot cache needs to know the exact byte range of every entry
 * it stores, which a streaming packer does not tell.
 */

export interface TarHeader {
  path: string;
  type: "file" | "symlink";
  /** Permission bits, e.g. 0o644. */
  mode: number;
  /** Bytes of content (0 for a symlink). */
  size: number;
  mtimeS: number;
  uid: number;
  gid: number;
  linkname?: string;
}

const BLOCK = 512;
/** ustar's size field holds 11 octal digits. */
export const MAX_TAR_ENTRY_BYTES = 8 ** 11 - 1;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function putString(block: Buffer, offset: number, width: number, value: string | Buffer): void {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  bytes.copy(block, offset, 0, Math.min(width, bytes.length));
}

/** One pax extended-header record: "<length> key=value\n", the length counting itself. */
export function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const bodyBytes = Buffer.byteLength(body);
  let length = bodyBytes + 1;
  while (String(length).length + bodyBytes !== length) length = String(length).length + bodyBytes;
  return Buffer.from(`${length}${body}`, "utf8");
}

function ustarBlock(h: {
  name: Buffer;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtimeS: number;
  typeflag: string;
  linkname: Buffer;
}): Buffer {
  const block = Buffer.alloc(BLOCK);
  putString(block, 0, 100, h.name);
  putString(block, 100, 8, octal(h.mode & 0o7777, 8));
  putString(block, 108, 8, octal(h.uid, 8));
  putString(block, 116, 8, octal(h.gid, 8));
  putString(block, 124, 12, octal(h.size, 12));
  putString(block, 136, 12, octal(Math.max(0, Math.floor(h.mtimeS)), 12));
  block.fill(" ", 148, 156);
  putString(block, 156, 1, h.typeflag);
  putString(block, 157, 100, h.linkname);
  putString(block, 257, 6, "ustar\0");
  putString(block, 263, 2, "00");
  let sum = 0;
  for (const byte of block) sum += byte;
  putString(block, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return block;
}

/** Zero bytes that fill an entry's content up to the next 512-byte block. */
export function tarPadding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** The header block(s) of one entry: its content follows, then `tarPadding(size)`. */
export function encodeTarHeader(header: TarHeader): Buffer {
  if (header.size > MAX_TAR_ENTRY_BYTES) {
    throw new RangeError(`${header.path}: ${header.size} bytes is more than a tar entry holds`);
  }
  const name = Buffer.from(header.path, "utf8");
  const linkname = Buffer.from(header.linkname ?? "", "utf8");
  const typeflag = header.type === "symlink" ? "2" : "0";
  const size = header.type === "symlink" ? 0 : header.size;
  const common = { mode: header.mode, uid: header.uid, gid: header.gid, mtimeS: header.mtimeS };
  const main = ustarBlock({ ...common, name, size, typeflag, linkname });
  if (name.length <= 100 && linkname.length <= 100) return main;
  const records = Buffer.concat([
    ...(name.length > 100 ? [paxRecord("path", header.path)] : []),
    ...(linkname.length > 100 ? [paxRecord("linkpath", header.linkname ?? "")] : []),
  ]);
  const pax = ustarBlock({
    ...common,
    name: Buffer.from("PaxHeader", "utf8"),
    size: records.length,
    typeflag: "x",
    linkname: Buffer.alloc(0),
  });
  return Buffer.concat([pax, records, tarPadding(records.length), main]);
}

/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);
