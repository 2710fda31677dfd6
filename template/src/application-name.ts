/**
 * This app's name, given to the core once (src/app.ts, src/check-config.ts,
 * src/generate-reference.ts): its configuration root key (`ProjectTemplate:...` in
 * appsettings*.json, `ProjectTemplate__...` environment variables), its cookie names
 * (`__Host-ProjectTemplate.Web.Authentication`, ...), the purposes its keys are used under, and the
 * application name on its pages. PascalCase letters and digits. Changing it ends every session
 * and moves every setting to the new root key.
 */
export const APPLICATION_NAME = 'ProjectTemplate'
