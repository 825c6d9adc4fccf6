// Lets TypeScript import the dashboard's embedded assets as text (`with { type: "text" }`).
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.js.txt" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
