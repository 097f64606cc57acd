// Internal: the image media types our blocks hold, shared by the schema check and the converters.
import { type ImageMediaType, ImageMediaTypeSchema } from './blocks.js';

const imageMediaTypes: ReadonlySet<string> = new Set(ImageMediaTypeSchema.options);

/** The four types, for messages: `image/jpeg, image/png, image/gif, image/webp`. */
export const IMAGE_MEDIA_TYPES_TEXT = ImageMediaTypeSchema.options.join(', ');

/** True for a media type our image blocks accept: one of the four of {@link ImageMediaTypeSchema}. */
export function isImageMediaType(mediaType: unknown): mediaType is ImageMediaType {
  return typeof mediaType === 'string' && imageMediaTypes.has(mediaType);
}

// The signatures of the four formats, as they start in base64.
const signatures: Array<[string, ImageMediaType]> = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['R0lGOD', 'image/gif'],
  ['UklGR', 'image/webp'],
];

/** The image type of base64 data, read from its first bytes; undefined when unknown. */
export function sniffImageType(base64: string): ImageMediaType | undefined {
  return signatures.find(([prefix]) => base64.startsWith(prefix))?.[1];
}
