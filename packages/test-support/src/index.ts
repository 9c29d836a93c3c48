export * from './app.js';
export * from './chat-model.js';
export * from './database.js';
export * from './push-fakes.js';
export * from './redis.js';
export * from './smtp.js';
