// The create operation's own checks (JSON schema + rules between fields) are the one
// implementation; the parser and its tests use them so every proposal is creatable as-is.
export { isValidCreateRequest, validateCreateRequest } from '../rule-validation.js';
