/**
 * `diagnose()`: the checks of `business-payments doctor` (configuration, reachability,
 * credentials, clock, approval, wallets, webhook endpoint, contract) as a function, for a
 * health endpoint.
 *
 * @module business-payments/doctor
 */
// Entry of `business-payments/doctor`: diagnose() for health endpoints and the CLI's
// `doctor`. Its own entry, built apart from the main one: the contract check needs zod's
// JSON Schema code, which an app that only makes calls should never load or bundle.
export { diagnose, type DiagnoseOptions, type Diagnosis, type DiagnosisCheck } from './doctor/diagnose.js';
