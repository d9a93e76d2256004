/**
 * The stored artifact: the engine's serialized model wrapped with the id maps a snapshot needs to translate
 * dense indices back to products and end users. End users are kept by database id only, never by their
 * external id, so an erased user (whose row is gone) cannot be re-identified from an old artifact.
 *
 * Layout (little-endian, sections 8-byte aligned):
 *   "RSA1" | u32 headerLength | header JSON | productIds f64[nItems] | endUserIds f64[nUsers]
 *   | meanRating f32[nItems] | ratingCount i32[nItems] | externalIds JSON (UTF-8) | engine bytes
 */
import type { ArtifactEnvelope } from "../snapshots/types";

const MAGIC = 0x31415352; // "RSA1" read as little-endian u32
const FORMAT_VERSION = 1;

interface Header {
  format: number;
  nItems: number;
  nUsers: number;
  externalIdsBytes: number;
  engineBytes: number;
}

const align8 = (n: number): number => (n + 7) & ~7;

export function encodeEnvelope(envelope: ArtifactEnvelope): Uint8Array {
  const nItems = envelope.productIds.length;
  const nUsers = envelope.endUserIds.length;
  const ids = new TextEncoder().encode(JSON.stringify(envelope.externalIds));
  const header: Header = {
    format: FORMAT_VERSION,
    nItems,
    nUsers,
    externalIdsBytes: ids.length,
    engineBytes: envelope.engineBytes.length,
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const sections = [
    8 + headerBytes.length,
    nItems * 8,
    nUsers * 8,
    nItems * 4,
    nItems * 4,
    ids.length,
    envelope.engineBytes.length,
  ];
  const total = sections.reduce((sum, size) => sum + align8(size), 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, headerBytes.length, true);
  out.set(headerBytes, 8);
  let at = align8(8 + headerBytes.length);
  const put = (bytes: Uint8Array) => {
    out.set(bytes, at);
    at += align8(bytes.length);
  };
  put(asBytes(envelope.productIds));
  put(asBytes(envelope.endUserIds));
  put(asBytes(envelope.meanRating));
  put(asBytes(envelope.ratingCount));
  put(ids);
  put(envelope.engineBytes);
  return out;
}

export function decodeEnvelope(bytes: Uint8Array): ArtifactEnvelope {
  if (bytes.length < 8) throw new Error("model artifact is truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new Error("model artifact has an unknown format");
  const headerLength = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Header;
  if (header.format !== FORMAT_VERSION) throw new Error(`model artifact format ${header.format} unsupported`);
  let at = align8(8 + headerLength);
  const take = (length: number): Uint8Array => {
    if (at + length > bytes.length) throw new Error("model artifact is truncated");
    // slice() copies into a fresh, aligned buffer, so typed-array views over it are always valid.
    const part = bytes.slice(at, at + length);
    at += align8(length);
    return part;
  };
  const productIds = new Float64Array(take(header.nItems * 8).buffer);
  const endUserIds = new Float64Array(take(header.nUsers * 8).buffer);
  const meanRating = new Float32Array(take(header.nItems * 4).buffer);
  const ratingCount = new Int32Array(take(header.nItems * 4).buffer);
  const externalIds = JSON.parse(new TextDecoder().decode(take(header.externalIdsBytes))) as string[];
  // The engine model's arrays become views into this part: no second copy of the largest section.
  if (at + header.engineBytes > bytes.length) throw new Error("model artifact is truncated");
  const engineBytes = bytes.subarray(at, at + header.engineBytes);
  return { engineBytes, productIds, externalIds, endUserIds, meanRating, ratingCount };
}

function asBytes(array: Float64Array | Float32Array | Int32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
