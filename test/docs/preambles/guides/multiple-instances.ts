// What docs/guides/multiple-instances.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
export { NestFactory } from '@nestjs/core';
export { DurableModule } from 'nestjs-durable';

export declare class AppModule {}
