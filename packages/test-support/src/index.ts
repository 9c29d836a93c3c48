export * from './database.js';
export * from './smtp.js';
export * from './app.js';
