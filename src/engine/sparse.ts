/** Compressed sparse rows; column indices are sorted and unique within each row. */
export interface Csr {
  nRows: number;
  nCols: number;
  indptr: Int32Array;
  indices: Int32Array;
  data: Float32Array;
}

/**
 * Builds a CSR from coordinate triplets in O(nnz + nRows + nCols): a counting sort by column then a stable
 * counting sort by row leaves each row's columns sorted, so duplicates are adjacent and are summed.
 * Entries whose summed value is not above `dropAtOrBelow` are dropped (e.g. net-negative feedback).
 */
export function buildCsr(
  rows: Int32Array,
  cols: Int32Array,
  vals: Float32Array,
  nRows: number,
  nCols: number,
  dropAtOrBelow = Number.NEGATIVE_INFINITY,
): Csr {
  const n = rows.length;
  const byCol = countingOrder(cols, nCols, null);
  const order = countingOrder(rows, nRows, byCol);
  const indptr = new Int32Array(nRows + 1);
  const tmpIdx = new Int32Array(n);
  const tmpVal = new Float32Array(n);
  let out = 0;
  let lastRow = -1;
  let lastCol = -1;
  for (let p = 0; p < n; p++) {
    const e = order[p]!;
    const r = rows[e]!;
    const c = cols[e]!;
    if (r === lastRow && c === lastCol) {
      tmpVal[out - 1]! += vals[e]!;
      continue;
    }
    tmpIdx[out] = c;
    tmpVal[out] = vals[e]!;
    indptr[r + 1]!++;
    out++;
    lastRow = r;
    lastCol = c;
  }
  for (let r = 0; r < nRows; r++) indptr[r + 1]! += indptr[r]!;
  if (dropAtOrBelow === Number.NEGATIVE_INFINITY) {
    return { nRows, nCols, indptr, indices: tmpIdx.slice(0, out), data: tmpVal.slice(0, out) };
  }
  return filterCsr({ nRows, nCols, indptr, indices: tmpIdx, data: tmpVal }, (v) => v > dropAtOrBelow);
}

function countingOrder(keys: Int32Array, nKeys: number, within: Int32Array | null): Int32Array {
  const n = keys.length;
  const start = new Int32Array(nKeys + 1);
  for (let i = 0; i < n; i++) start[keys[i]! + 1]!++;
  for (let k = 0; k < nKeys; k++) start[k + 1]! += start[k]!;
  const order = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const e = within === null ? p : within[p]!;
    order[start[keys[e]!]!++] = e;
  }
  return order;
}

export function filterCsr(m: Csr, keep: (v: number) => boolean): Csr {
  const indptr = new Int32Array(m.nRows + 1);
  let nnz = 0;
  for (let r = 0; r < m.nRows; r++) {
    for (let p = m.indptr[r]!; p < m.indptr[r + 1]!; p++) if (keep(m.data[p]!)) nnz++;
    indptr[r + 1] = nnz;
  }
  const indices = new Int32Array(nnz);
  const data = new Float32Array(nnz);
  let o = 0;
  for (let r = 0; r < m.nRows; r++) {
    for (let p = m.indptr[r]!; p < m.indptr[r + 1]!; p++) {
      const v = m.data[p]!;
      if (!keep(v)) continue;
      indices[o] = m.indices[p]!;
      data[o++] = v;
    }
  }
  return { nRows: m.nRows, nCols: m.nCols, indptr, indices, data };
}

/** Transpose in O(nnz); rows of the result come out with sorted column indices. */
export function transposeCsr(m: Csr): Csr {
  const nnz = m.indices.length;
  const indptr = new Int32Array(m.nCols + 1);
  for (let p = 0; p < nnz; p++) indptr[m.indices[p]! + 1]!++;
  for (let c = 0; c < m.nCols; c++) indptr[c + 1]! += indptr[c]!;
  const next = indptr.slice(0, m.nCols);
  const indices = new Int32Array(nnz);
  const data = new Float32Array(nnz);
  for (let r = 0; r < m.nRows; r++) {
    for (let p = m.indptr[r]!; p < m.indptr[r + 1]!; p++) {
      const q = next[m.indices[p]!]!++;
      indices[q] = r;
      data[q] = m.data[p]!;
    }
  }
  return { nRows: m.nCols, nCols: m.nRows, indptr, indices, data };
}
