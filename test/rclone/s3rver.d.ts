// s3rver ships no types; the tests use its constructor, run(), close() and its S3 event
// notifications ('event', one Records[0] per object created or removed: s3rver's models/event.js).
declare module 's3rver' {
  export default class S3rver {
    constructor(options: Record<string, unknown>);
    run(): Promise<unknown>;
    close(): Promise<void>;
    on(event: 'event', listener: (event: { Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string } } }[] }) => void): this;
  }
}
