import { mkdir } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.js';
import { canonicalPath, errorCode, parsePath } from './containment.js';
import { MultipartParser } from './multipart.js';
import { boundaryOf, type PartInfo } from './part-headers.js';
import { UploadSink } from './upload-sink.js';

/** The spec's upload limit: 100 MB (MiB) of file content; one byte more is 413. */
export const UPLOAD_LIMIT_BYTES = 100 * 1024 * 1024;
/** One file, a few small fields: anything beyond is refused rather than read. */
const LIMITS = { files: 1, fields: 8, parts: 10, fieldBytes: 64 * 1024, headBytes: 16 * 1024 };

/** The client went away mid-upload: there is nobody to answer. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected during upload');
  }
}

/** The file part, fully written to a temp file in its destination directory. */
export interface StoredPart {
  temp: string;
  dir: string;
  size: number;
  hash: string;
  /** The uploaded name as sent ('' for `filename=""`), undefined when the part named none. */
  filename: string | undefined;
  /** The part's Content-Type (`type/subtype`), undefined when the part had none. */
  contentType: string | undefined;
}

/**
 * Reads the form. `space` must come before the file part: parts stream in order, and the
 * temp file is created in the destination as soon as the file starts. The part named
 * `file` is the file, with or without a filename; other file-like parts (a filename, or
 * application/octet-stream) count against the one-file limit and are dropped.
 */
export function readForm(request: IncomingMessage, defaultDir: string): Promise<StoredPart> {
  return new Promise((resolve, reject) => {
    const boundary = boundaryOf(request.headers['content-type']);
    if (!boundary) return reject(new HttpError(400, 'Expected a multipart/form-data body'));
    const form = new FormReader(request, defaultDir, resolve, reject);
    const parser = new MultipartParser(boundary, form, { maxParts: LIMITS.parts, maxHeadBytes: LIMITS.headBytes });
    request.on('data', (chunk: Buffer) => form.guard(() => parser.write(chunk)));
    request.on('end', () => form.guard(() => form.complete(parser)));
    request.on('error', () => undefined); // a reset shows up as 'close' below
    request.on('close', () => {
      if (!request.complete) form.fail(new ClientGone());
    });
  });
}

type PartKind = 'file' | 'space' | 'ignored';

/** The multipart events of one upload form, turned into a stored file or one failure. */
class FormReader {
  private space: string | undefined;
  private files = 0;
  private fields = 0;
  private kind: PartKind = 'ignored';
  private spaceBytes: Buffer[] = [];
  private spaceSize = 0;
  private file: { sink: UploadSink; opened: Promise<string>; info: PartInfo } | undefined;
  private settled = false;

  constructor(
    private readonly request: IncomingMessage,
    private readonly defaultDir: string,
    private readonly resolve: (part: StoredPart) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  partStart(info: PartInfo): void {
    const fileLike = info.name === 'file' || info.filename !== undefined || info.contentType === 'application/octet-stream';
    if (fileLike) {
      if (++this.files > LIMITS.files) throw new HttpError(400, 'Only one file per upload');
      this.kind = info.name === 'file' ? 'file' : 'ignored';
      if (this.kind === 'file') this.startFile(info);
    } else {
      if (++this.fields > LIMITS.fields) throw new HttpError(400, 'Too many form fields');
      this.kind = info.name === 'space' ? 'space' : 'ignored';
      if (this.kind === 'space' && this.file) throw new HttpError(400, 'The space field must come before the file part');
      this.spaceBytes = [];
      this.spaceSize = 0;
    }
  }

  partData(data: Buffer): void {
    if (this.kind === 'file') {
      const { sink } = this.file!;
      // The sink keeps `data` by reference, then moves its memory to the hashing thread once
      // written: request chunks are never reused, and the parser has moved on by then.
      if (sink.size + data.length > UPLOAD_LIMIT_BYTES) throw tooLarge();
      if (!sink.push(data)) {
        this.request.pause();
        sink.whenWritable(() => this.request.resume());
      }
    } else if (this.kind === 'space') {
      this.spaceSize += data.length;
      if (this.spaceSize > LIMITS.fieldBytes) throw new HttpError(400, 'space is too long');
      this.spaceBytes.push(Buffer.from(data));
    }
  }

  partEnd(): void {
    if (this.kind === 'space') this.space = Buffer.concat(this.spaceBytes).toString('utf8');
    this.kind = 'ignored';
  }

  /** The body is in: the form must be whole and hold the file. */
  complete(parser: MultipartParser): void {
    parser.end();
    if (!this.file) throw new HttpError(400, 'Missing file');
    const { sink, opened, info } = this.file;
    void opened
      .then(async (dir) => ({ dir, sunk: await sink.finish() }))
      .then(({ dir, sunk }) => {
        if (this.settled) return void sink.abort();
        this.settled = true;
        this.resolve({ ...sunk, dir, filename: info.filename, contentType: info.contentType });
      }, (err: unknown) => this.fail(err));
  }

  /** Runs a parser step; whatever it throws fails the form. */
  guard(step: () => void): void {
    if (this.settled) return;
    try {
      step();
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * Stops storing but keeps reading what comes (the answer then closes the connection), and
   * answers only once the temp file is gone.
   */
  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.request.resume();
    const file = this.file;
    // Let a temp file being created come into being first, so it is surely removed.
    const cleanup = file ? file.opened.catch(() => undefined).then(() => file.sink.abort()) : Promise.resolve();
    void cleanup.then(() => this.reject(err));
  }

  private startFile(info: PartInfo): void {
    const sink = new UploadSink((err) => this.fail(err));
    const opened = destination(this.space, this.defaultDir).then(async (dir) => {
      await sink.open(dir);
      return dir;
    });
    opened.catch((err: unknown) => this.fail(err));
    this.file = { sink, opened, info };
  }
}

/** `space` (outside $HOME allowed, per the spec) or ~/uploads, resolved and created. */
async function destination(space: string | undefined, defaultDir: string): Promise<string> {
  const dir = await canonicalPath(space ? parsePath(space, 'space') : defaultDir);
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw errorCode(err) === 'EEXIST' ? new HttpError(404, 'Not a directory') : err;
  });
  return dir;
}

export function tooLarge(): HttpError {
  return new HttpError(413, `File exceeds ${UPLOAD_LIMIT_BYTES / (1024 * 1024)} MB limit`);
}
